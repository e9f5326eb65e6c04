"""Scripted multi-connection transcripts for differential tests.

run_script(port, {"a": 3, "b": 2}, steps) opens one raw connection per
name (RESP3 when asked, via HELLO 3), sends each step's request on its
connection, waits for that connection's reply plus a short settle time, and
records what every connection received during the step (replies and pushes,
in order).  Client ids differ between servers, so integer replies equal to
a connection's id become <name>; "{id:X}" in a request stands for X's id.
A step whose name starts with "~" expects no reply to its request (CLIENT
REPLY OFF, a postponed or blocked command): only the settle time passes.
compare(start_server, conns, steps) runs the script on redis-like-server
and on Debian's redis-server and asserts the transcripts are identical.
"""
import re
import socket
import time

SETTLE = 0.03   # seconds to wait for pushes after the sender's reply came


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.sock.setblocking(False)

    def send(self, args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)

    def wait_readable(self, timeout=3.0):
        """Block until something arrives (the reply to our request)."""
        self.sock.settimeout(timeout)
        try:
            chunk = self.sock.recv(65536, socket.MSG_PEEK)
        except socket.timeout:
            chunk = b""
        self.sock.setblocking(False)
        return chunk

    def read_until(self, end, timeout=5.0):
        """Everything up to and including end (setup replies)."""
        data, deadline = b"", time.time() + timeout
        while not data.endswith(end) and time.time() < deadline:
            self.wait_readable(max(0.01, deadline - time.time()))
            data += self.drain()
        return data

    def drain(self):
        data = b""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except BlockingIOError:
                return data
            if not chunk:
                return data + b"<closed>"
            data += chunk


def run_script(port, conns, steps):
    """conns: {name: proto}; steps: [(name, [args...]) or ("sleep", secs)].
    Returns the transcript: per step, {name: bytes received}."""
    cs = {n: Conn(port) for n in conns}
    ids = {}
    for n, proto in conns.items():
        cs[n].send(["CLIENT", "ID"])
        ids[n] = int(re.match(rb":(\d+)\r\n", cs[n].read_until(b"\r\n")).group(1))
        if proto == 3:
            cs[n].send(["HELLO", "3"])
            cs[n].read_until(b"modules\r\n*0\r\n")
    transcript = []
    for name, args in steps:
        if name == "sleep":
            time.sleep(args)
        else:
            args = [re.sub(r"\{id:(\w+)\}", lambda m: str(ids[m.group(1)]), a) for a in args]
            quiet = name.startswith("~")
            cs[name.lstrip("~")].send(args)
            if not quiet:
                cs[name].wait_readable()
        time.sleep(SETTLE)
        got = {}
        for n in conns:
            data = cs[n].drain()
            for other, i in ids.items():
                tag = b"<" + other.encode() + b">"
                # ids appear in TRACKINGINFO, redir-broken pushes, GETREDIR
                data = re.sub(rb"(?<=redirect\r\n:)%d(?=\r\n)" % i, tag, data)
                data = re.sub(rb"(?<=redir-broken\r\n:)%d(?=\r\n)" % i, tag, data)
                if n == name.lstrip("~") and [a.lower() for a in args[:2]] == ["client", "getredir"]:
                    data = re.sub(rb"^:%d(?=\r\n)" % i, b":" + tag, data)
            got[n] = data
        transcript.append(((name, args if name == "sleep" else tuple(args)), got))
    for c in cs.values():
        c.sock.close()
    return transcript


def compare(start_server, conns, steps, args=()):
    ours = start_server(args=args)
    ref = start_server(args=args, binary="/usr/bin/redis-server")
    mine = run_script(ours.port, conns, steps)
    theirs = run_script(ref.port, conns, steps)
    for (step, a), (_, b) in zip(mine, theirs):
        assert a == b, step
    return mine


