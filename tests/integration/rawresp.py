"""A raw RESP2/RESP3 connection for tests that must see exact frames
(push '>' vs array '*', nulls, the order of replies), which redis-py hides.

RawConn(port).send("SUBSCRIBE", "a") writes one request; read() returns
the next complete value: bytes for strings, int, None for nulls, a list for
arrays, ("push", [...]) for RESP3 pushes, ("err", text) for errors.
"""
import socket


class RawConn:
    def __init__(self, port, timeout=5.0, rcvbuf=None):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        self.buf = b""

    def send(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)

    def call(self, *args):
        self.send(*args)
        return self.read()

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed by server")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b"+",):
            return rest.decode()
        if t == b"-":
            return ("err", rest.decode())
        if t == b":":
            return int(rest)
        if t == b"_":
            return None
        if t in (b"#",):
            return rest == b"t"
        if t == b",":
            return float(rest)
        if t in (b"$", b"="):
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if t in (b"*", b"~", b">", b"%"):
            n = int(rest)
            if n < 0:
                return None
            count = n * 2 if t == b"%" else n
            items = [self.read() for _ in range(count)]
            return ("push", items) if t == b">" else items
        raise ValueError("bad RESP type byte: %r" % line)

    def close(self):
        self.sock.close()
