"""Differential test of the command metadata: COMMAND, COMMAND INFO, COMMAND
DOCS, COMMAND LIST (with filters), COMMAND COUNT, COMMAND GETKEYS and
GETKEYSANDFLAGS against Redis 7.4.1, in RESP2 and RESP3 (issue 47: our
metadata is 7.4.1's).  7.4.1 is live when utils/dev/redis74-ref.sh can build
it, else its replies come from transcripts/command_meta_74.json (ref74.py;
utils/dev/gen-74-transcripts.py records them).

Replies are read with their RESP types kept (set vs array, map, simple vs
bulk), so a reply that renders the same in redis-py but uses another type
fails.  Redis lists subcommands in hash order: they are compared sorted,
and Redis's entries are restricted to the subcommands implemented here.
redis-cli's `help <command>` (built from COMMAND DOCS) must print the same
text for both servers.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_command_meta.py"""
import socket
import subprocess

import pytest

from ref74 import Ref74, RefConn

pytestmark = pytest.mark.differential


class Typed:
    """A RESP connection whose replies keep their types: (type, value)."""

    def __init__(self, port, proto):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""
        if proto == 3:
            self.call("HELLO", "3")

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            assert chunk, "connection closed"
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b"+", b"-", b":", b"_", b","):
            return (t.decode(), rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return ("nullbulk", None)
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(1 << 20)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return ("$", data)
        if t in (b"*", b"~"):
            n = int(rest)
            if n < 0:
                return ("nullarray", None)
            return (t.decode(), [self.read() for _ in range(n)])
        if t == b"%":
            return ("%", [(self.read(), self.read()) for _ in range(int(rest))])
        raise AssertionError("unexpected %r" % line)

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        return self.read()

    def close(self):
        self.sock.close()


def text(v):
    return v[1].decode()


# Commands Redis 7.4.1 does not have (Redis 8.0's HGETDEL, HGETEX, HSETEX);
# the metadata comparison covers the 7.4 surface.
NEWER = set("hgetdel hgetex hsetex".split())
# Commands whose metadata is knowingly not 7.4.1's: none.
GREW = set()


def implemented(port):
    """Our full names (top-level and subcommands) from COMMAND LIST, less
    the commands newer than Redis 7.0."""
    c = Typed(port, 2)
    names = {text(x) for x in c.call("COMMAND", "LIST")[1]}
    c.close()
    return names - NEWER


def norm_info(entry, keep):
    """An INFO entry with its subcommands filtered to keep and sorted."""
    t, v = entry
    v = list(v)
    st, subs = v[9]
    if st == "*":
        subs = sorted((norm_info(s, keep) for s in subs if text(s[1][0]) in keep), key=repr)
        v[9] = (st, subs)
    return (t, v)


def pairs(value):
    """(key, value) pairs of a RESP3 map or of its RESP2 flat array."""
    t, v = value
    return v if t == "%" else list(zip(v[0::2], v[1::2]))


def norm_docs(doc, keep):
    out = []
    for k, v in pairs(doc):
        if k[1] == b"subcommands":
            v = (v[0], sorted(((kk, norm_docs(vv, keep)) for kk, vv in pairs(v) if text(kk) in keep), key=repr))
        out.append((k, v))
    return (doc[0], out)


@pytest.fixture(scope="module")
def pair(server):
    ref = Ref74("command_meta")
    yield server.port, ref
    ref.stop()


def ref_conn(pair, proto):
    return RefConn(pair[1], proto, Typed)


@pytest.fixture(scope="module")
def ours(pair):
    return implemented(pair[0])


@pytest.mark.parametrize("proto", [2, 3])
def test_info_and_docs_of_every_command(pair, ours, proto):
    a, b = Typed(pair[0], proto), ref_conn(pair, proto)
    top = sorted(n for n in ours if "|" not in n)
    assert len(top) > 150
    for name in top:
        if name in GREW:
            continue
        mine, theirs = a.call("COMMAND", "INFO", name), b.call("COMMAND", "INFO", name)
        assert norm_info(mine[1][0], ours) == norm_info(theirs[1][0], ours), name
        mine, theirs = a.call("COMMAND", "DOCS", name), b.call("COMMAND", "DOCS", name)
        (mk, mv), (tk, tv) = pairs(mine)[0], pairs(theirs)[0]
        assert mine[0] == theirs[0] and mk == tk, name
        assert norm_docs(mv, ours) == norm_docs(tv, ours), name
    for name in sorted(n for n in ours if "|" in n):
        assert a.call("COMMAND", "INFO", name) == b.call("COMMAND", "INFO", name), name
        assert a.call("COMMAND", "DOCS", name) == b.call("COMMAND", "DOCS", name), name
    # Unknown names: a null per name in INFO, nothing in DOCS.
    assert a.call("COMMAND", "INFO", "nosuch", "get|x") == b.call("COMMAND", "INFO", "nosuch", "get|x")
    assert a.call("COMMAND", "DOCS", "nosuch") == b.call("COMMAND", "DOCS", "nosuch")
    a.close()
    b.close()


def test_command_all_and_count(pair, ours):
    a, b = Typed(pair[0], 3), ref_conn(pair, 3)
    everything = a.call("COMMAND")[1]
    names = {text(e[1][0]) for e in everything}
    top = {n for n in ours if "|" not in n}
    assert names == top | NEWER
    assert int(a.call("COMMAND", "COUNT")[1]) == len(top | NEWER)
    theirs = {text(x) for x in b.call("COMMAND", "LIST")[1]}
    assert ours <= theirs, ours - theirs
    # The same entries as COMMAND INFO of each name.
    by_name = {text(e[1][0]): e for e in everything}
    for name in ("get", "client", "zadd", "command"):
        assert by_name[name] == a.call("COMMAND", "INFO", name)[1][0]
    a.close()
    b.close()


@pytest.mark.parametrize("args", [
    ("FILTERBY", "ACLCAT", "read"), ("FILTERBY", "ACLCAT", "dangerous"), ("FILTERBY", "aclcat", "nosuch"),
    ("FILTERBY", "PATTERN", "cl*"), ("FILTERBY", "PATTERN", "*|*"), ("FILTERBY", "MODULE", "x"),
    ("FILTERBY", "foo", "bar"), ("x",), ("FILTERBY", "PATTERN"),
])
def test_command_list_filters(pair, ours, args):
    a, b = Typed(pair[0], 2), ref_conn(pair, 2)
    mine, theirs = a.call("COMMAND", "LIST", *args), b.call("COMMAND", "LIST", *args)
    if theirs[0] == "*":
        assert mine[0] == "*"
        assert sorted(text(x) for x in mine[1]) == sorted(text(x) for x in theirs[1] if text(x) in ours)
    else:
        assert mine == theirs
    a.close()
    b.close()


GETKEYS = [
    ("get", "a"), ("set", "a", "b"), ("set", "a", "b", "get"), ("mset", "a", "1", "b", "2"),
    ("del", "a", "b", "c"), ("zunionstore", "d", "2", "a", "b", "weights", "1", "2"),
    ("zunionstore", "d", "5", "a", "b"), ("zinter", "2", "a", "b"), ("sintercard", "2", "a", "b"),
    ("lmove", "a", "b", "left", "right"), ("blmpop", "0", "2", "a", "b", "left"),
    ("bzpopmin", "a", "b", "0"), ("object", "encoding", "k"), ("config", "get", "x"), ("ping",),
    ("nosuch", "a"), ("get",), ("get", "a", "b"), ("config",), ("rename", "a", "b"),
    ("smove", "a", "b", "m"), ("zrangestore", "d", "s", "0", "1"), ("memory", "usage", "k"),
    ("lmpop", "2", "a", "b", "left", "count", "1"), ("zmpop", "x", "a"), ("copy", "a", "b"),
    ("sort", "a", "by", "w*", "get", "#", "store", "b"), ("georadius", "g", "0", "0", "1", "km", "store", "b"),
    ("eval", "return 1", "0"), ("eval", "return 1", "2", "a", "b", "c"),
    ("migrate", "h", "1", "", "0", "5", "keys", "a", "b"), ("migrate", "h", "1", "k", "0", "5"),
    ("xread", "count", "1", "streams", "a", "b", "0", "0"), ("bitfield", "a", "get", "u8", "0"),
    ("bitfield", "a", "set", "u8", "0", "1"), ("watch", "a", "b"), ("exists", "a", "b"),
    ("hset", "h", "f", "v"), ("expire", "a", "10"), ("subscribe", "c"), ("touch", "a", "b"),
]


@pytest.mark.parametrize("proto", [2, 3])
def test_getkeys(pair, ours, proto):
    a, b = Typed(pair[0], proto), ref_conn(pair, proto)
    for case in GETKEYS:
        if case[0] not in ours and case[0] != "nosuch":
            continue
        for sub in ("GETKEYS", "GETKEYSANDFLAGS"):
            assert a.call("COMMAND", sub, *case) == b.call("COMMAND", sub, *case), (sub, case)
    a.close()
    b.close()


def test_help_and_arity_errors(pair):
    a, b = Typed(pair[0], 2), ref_conn(pair, 2)
    for args in (("HELP",), ("COUNT", "x"), ("GETKEYS",), ("NOSUCH",)):
        assert a.call("COMMAND", *args) == b.call("COMMAND", *args), args
    a.close()
    b.close()


@pytest.mark.parametrize("what", ["GET", "client list", "client tracking", "ZADD", "config set", "@string", "SET"])
def test_redis_cli_help(pair, what):
    """redis-cli builds its `help` text and hints from COMMAND DOCS."""
    def cli(port):
        p = subprocess.run(["redis-cli", "-p", str(port), "help"] + what.split(), capture_output=True,
                           text=True, timeout=20)
        assert p.returncode == 0
        return p.stdout

    outs = [cli(pair[0]), pair[1].reply(["redis-cli help", what], lambda: cli(pair[1].port))]
    assert "summary" in outs[0] or what.startswith("@")
    if what.startswith("@"):
        # The group lists only implemented commands here: ours is a subset.
        mine = {l for l in outs[0].splitlines() if l.strip()}
        theirs = {l for l in outs[1].splitlines() if l.strip()}
        assert mine and mine <= theirs
    else:
        assert outs[0] == outs[1]
