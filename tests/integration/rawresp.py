"""A raw RESP2/RESP3 connection for tests that must see exact frames
(push '>' vs array '*', nulls, the order of replies), which redis-py hides.

RawConn(port).send("SUBSCRIBE", "a") writes one request; read() returns
the next complete value: str for simple strings, bytes for bulk strings,
int, float, None for nulls, a list for arrays (maps flattened), ("push",
[...]) for RESP3 pushes, ("attr", [...]) for attributes (the reply they
annotate is the next one read), ("err", text) for errors.

ExactConn is the same connection for differential tests: call() and
read_exact() return (the reply's exact bytes, value), with every text kept
as bytes: simple strings as bytes, errors ("err", bytes), doubles
("dbl", bytes) so the server's own formatting is what gets compared.
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

    def _parse(self, exact):
        """(raw bytes, value) of the next reply; exact keeps texts as bytes."""
        line = self._line()
        t, rest = line[:1], line[1:]
        raw = line + b"\r\n"
        if t == b"+":
            return raw, rest if exact else rest.decode()
        if t == b"-":
            return raw, ("err", rest if exact else rest.decode())
        if t == b":":
            return raw, int(rest)
        if t == b"_":
            return raw, None
        if t == b"#":
            return raw, rest == b"t"
        if t == b",":
            return raw, ("dbl", rest) if exact else float(rest)
        if t == b"(":
            return raw, ("big", rest) if exact else int(rest)
        if t in (b"$", b"="):
            n = int(rest)
            if n < 0:
                return raw, None
            while len(self.buf) < n + 2:
                self._fill()
            data, self.buf = self.buf[:n + 2], self.buf[n + 2:]
            return raw + data, data[:-2]
        if t in (b"*", b"~", b">", b"%", b"|"):
            n = int(rest)
            if n < 0:
                return raw, None
            items = []
            for _ in range(n * 2 if t in (b"%", b"|") else n):
                r, v = self._parse(exact)
                raw += r
                items.append(v)
            if t == b">":
                return raw, ("push", items)
            return raw, ("attr", items) if t == b"|" else items
        raise ValueError("bad RESP type byte: %r" % line)

    def read(self):
        return self._parse(False)[1]

    def read_exact(self):
        return self._parse(True)

    def close(self):
        self.sock.close()


class ExactConn(RawConn):
    """call() returns (exact reply bytes, value): see the module's doc."""

    def __init__(self, port, timeout=10.0):
        super().__init__(port, timeout=timeout)

    def call(self, *args):
        self.send(*args)
        return self.read_exact()
