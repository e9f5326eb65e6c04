"""What a replica (and the AOF) receives for each command, against Debian's
redis-server 7.0.15: a test attaches to each server's replication stream
with SYNC, runs the same commands on both, and compares the commands that
arrive.  Commands whose effect is not in their arguments are logged as
Redis logs them: blocking and multi-key pops as the plain pop they did
(a replica must never block or choose a key), SPOP as SREM or DEL,
GETDEL as DEL, INCRBYFLOAT and HINCRBYFLOAT as the value they set, SET
with an expiry as SET ... PXAT, FLUSHALL even on empty databases.

Timestamps (PXAT, PEXPIREAT) are compared as "<ms>"; command names without
regard to case (Redis upper-cases the ones it rewrites).  Left out: GEOADD
(Redis logs it as ZADD, we as itself: same effect) and XREADGROUP (we add
XGROUP CREATECONSUMER and SETID, which Redis 7.2 logs too)."""
import re
import time

import pytest

from conftest import REDIS_SERVER, SERVER, ServerProcess
from rawresp import RawConn

pytestmark = pytest.mark.differential


class ReplicationStream:
    """SYNC on a fresh connection; commands() returns what arrived up to a
    marker (a PUBLISH, which goes to replicas only), PING and SELECT
    dropped, as normalized strings."""

    def __init__(self, port):
        self.c = RawConn(port, timeout=10)
        self.c.send("SYNC")
        # While the RDB is made the master sends bare "\n" keepalives, once a
        # second: on a slow machine they can precede the "$<len>" line.
        line = self.c._line().lstrip(b"\n")
        while not line.startswith(b"$"):
            line = self.c._line().lstrip(b"\n")
        n = int(line[1:])
        while len(self.c.buf) < n:
            self.c._fill()
        self.c.buf = self.c.buf[n:]

    def commands(self, conn):
        conn.call("PUBLISH", "--marker--", "x")
        out = []
        while True:
            words = [x.decode(errors="replace") if isinstance(x, bytes) else str(x) for x in self.c.read()]
            words[0] = words[0].lower()
            if words[0] in ("ping", "select"):
                continue
            if words[:2] == ["publish", "--marker--"]:
                return out
            out.append(" ".join(re.sub(r"^1\d{12}$", "<ms>", w) for w in words))


CASES = {
    "getdel": [["SET", "k", "v"], ["GETDEL", "k"], ["GETDEL", "k"]],
    "getdel lazy": [["CONFIG", "SET", "lazyfree-lazy-user-del", "yes"], ["SET", "k", "v"], ["GETDEL", "k"],
                    ["CONFIG", "SET", "lazyfree-lazy-user-del", "no"]],
    "getset": [["GETSET", "k", "v"]],
    "set forms": [["SET", "k", "v"], ["SET", "k", "v2", "EX", "100", "GET"], ["SET", "k", "v3", "GET"],
                  ["SET", "k", "v4", "NX"], ["SET", "k2", "v", "XX", "PX", "5000"], ["SET", "k3", "v", "NX", "EX", "9"],
                  ["SET", "k", "v5", "KEEPTTL", "GET"]],
    "setex": [["SETEX", "k", "100", "v"], ["PSETEX", "k", "100000", "v"]],
    "getex": [["SET", "k", "v"], ["GETEX", "k", "EX", "100"], ["GETEX", "k", "PERSIST"], ["GETEX", "k"]],
    "incrbyfloat": [["SET", "k", "1"], ["PEXPIRE", "k", "100000"], ["INCRBYFLOAT", "k", "1.5"],
                    ["INCRBYFLOAT", "n", "0.1"]],
    "hincrbyfloat": [["HINCRBYFLOAT", "h", "f", "1.5"], ["HINCRBYFLOAT", "h", "f", "2.5e3"]],
    "lmpop": [["RPUSH", "l", "a", "b", "c"], ["LMPOP", "2", "x", "l", "LEFT", "COUNT", "2"],
              ["LMPOP", "1", "l", "RIGHT", "COUNT", "9"], ["LMPOP", "1", "l", "RIGHT"]],
    "zmpop": [["ZADD", "z", "1", "a", "2", "b", "3", "c"], ["ZMPOP", "1", "z", "MIN", "COUNT", "2"],
              ["ZMPOP", "1", "z", "MAX", "COUNT", "5"], ["ZMPOP", "1", "z", "MAX"]],
    "blocking pops served at once": [["RPUSH", "l", "a", "b", "c", "d"], ["BLPOP", "l", "0"], ["BRPOP", "x", "l", "0"],
                                     ["BLMOVE", "l", "d", "LEFT", "RIGHT", "0"], ["BRPOPLPUSH", "l", "d", "0"],
                                     ["BLMPOP", "0", "1", "d", "LEFT", "COUNT", "5"],
                                     ["ZADD", "z", "1", "a", "2", "b", "3", "c"], ["BZPOPMIN", "z", "0"],
                                     ["BZPOPMAX", "z", "0"], ["BZMPOP", "0", "1", "z", "MIN", "COUNT", "3"]],
    "spop": [["SADD", "s", "a"], ["SPOP", "s"], ["SADD", "s", "a", "b"], ["SPOP", "s", "5"], ["SPOP", "s"],
             ["SADD", "s", "only"], ["SPOP", "s", "1"], ["SPOP", "s", "0"]],
    "flush on empty": [["FLUSHALL"], ["FLUSHDB"], ["FLUSHALL", "ASYNC"]],
    "pfcount refreshes its cache": [["PFADD", "h", "a", "b"], ["PFCOUNT", "h"], ["PFCOUNT", "h"]],
    "expire forms": [["SET", "k", "v"], ["EXPIRE", "k", "100"], ["PEXPIRE", "k", "100000"], ["SET", "k2", "v"],
                     ["EXPIREAT", "k2", "1"], ["SET", "k3", "v"], ["EXPIRE", "k3", "-1"]],
    "transaction": [["MULTI"], ["SET", "a", "1"], ["INCR", "a"], ["GETDEL", "a"], ["EXEC"]],
    "script": [["EVAL", "redis.call('set', KEYS[1], 'v'); redis.call('rpush', 'l', 'a'); "
                        "return redis.call('lmpop', 1, 'l', 'left')", "1", "k"]],
}


@pytest.fixture(scope="module")
def pair():
    """Our server and redis-server: (connections, streams, ports)."""
    servers = [ServerProcess(binary, ["--save", "", "--enable-debug-command", "yes"])
               for binary in (SERVER, REDIS_SERVER)]
    try:
        ports = [s.port for s in servers]
        conns = [RawConn(p) for p in ports]
        streams = [ReplicationStream(p) for p in ports]
        yield conns, streams, ports
        for st in streams:  # else shutdown waits for these "replicas" to catch up
            st.c.close()
    finally:
        for s in servers:
            s.stop()


def fresh(conns, streams):
    for c, st in zip(conns, streams):
        c.call("FLUSHALL")
        st.commands(c)


def logged(conns, streams):
    return [st.commands(c) for c, st in zip(conns, streams)]


@pytest.mark.parametrize("name", list(CASES))
def test_logged_as_redis_logs_it(pair, name):
    conns, streams, _ = pair
    fresh(conns, streams)
    for cmd in CASES[name]:
        replies = [c.call(*cmd) for c in conns]
        if cmd[0] not in ("SPOP",):
            assert type(replies[0]) is type(replies[1]), (cmd, replies)
    got = logged(conns, streams)
    assert got[0] == got[1], name


def test_randomkey_logs_the_expired_keys_it_meets(pair):
    """RANDOMKEY deletes the expired keys it draws as a lookup would: each
    logged as its own DEL (not inside MULTI), as Redis logs them."""
    conns, streams, _ = pair
    fresh(conns, streams)
    for c in conns:
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        c.call("SET", "foo1", "bar", "PX", "1")
        c.call("SET", "foo2", "bar", "PX", "1")
    time.sleep(0.01)
    for c in conns:
        assert c.call("RANDOMKEY") is None
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    got = [sorted(x) for x in logged(conns, streams)]
    assert got[0] == got[1] == ["del foo1", "del foo2", "set foo1 bar PXAT <ms>", "set foo2 bar PXAT <ms>"]


@pytest.mark.parametrize("blocked, wake, expect", [
    (["BLPOP", "l", "0"], ["RPUSH", "l", "a", "b"], "lpop l"),
    (["BRPOP", "l", "0"], ["RPUSH", "l", "a", "b"], "rpop l"),
    (["BLMPOP", "0", "1", "l", "RIGHT", "COUNT", "5"], ["RPUSH", "l", "a", "b"], "rpop l 2"),
    (["BLMOVE", "l", "d", "LEFT", "RIGHT", "0"], ["RPUSH", "l", "a"], "lmove l d LEFT RIGHT"),
    (["BRPOPLPUSH", "l", "d", "0"], ["RPUSH", "l", "a"], "rpoplpush l d"),
    (["BZPOPMIN", "z", "0"], ["ZADD", "z", "1", "a"], "zpopmin z"),
    (["BZMPOP", "0", "1", "z", "MAX", "COUNT", "5"], ["ZADD", "z", "1", "a"], "zpopmax z 1"),
])
def test_a_served_blocked_client_is_logged_as_the_plain_pop(pair, blocked, wake, expect):
    conns, streams, ports = pair
    fresh(conns, streams)
    waiters = []
    for port in ports:
        w = RawConn(port)
        w.send(*blocked)
        waiters.append(w)
    time.sleep(0.2)
    for c in conns:
        c.call(*wake)
    for w in waiters:
        assert w.read() is not None
        w.close()
    # Redis writes LEFT/RIGHT of a served BLMOVE in lower case: the same
    # command, so the comparison ignores case here.
    got = [[line.lower() for line in st] for st in logged(conns, streams)]
    assert got[0] == got[1]
    assert got[0][-1] == expect.lower()


def test_flushall_saves_the_empty_data_set(start_server, tmp_path):
    """With save points, FLUSHALL writes the (empty) RDB at once, as Redis
    does: a crash right after it must not bring the keys back."""
    s = start_server(args=["--dir", str(tmp_path), "--save", "3600 1"])
    c = s.client()
    c.set("k", "v")
    c.save()
    c.flushall()
    s.proc.kill()                                  # no shutdown save
    s.proc.wait(10)
    again = start_server(args=["--dir", str(tmp_path), "--save", "3600 1"])
    assert again.client().dbsize() == 0


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_restore_is_logged_with_an_absolute_ttl(start_server, binary):
    """RESTORE key ttl payload: logged with the expiry time in place of the
    TTL and ABSTTL (replayed later, it must not live longer); a payload
    restored already expired over a key is logged as DEL."""
    s = start_server(args=["--save", ""], binary=binary)
    c = RawConn(s.port)
    c.call("SET", "src", "v")
    payload = c.call("DUMP", "src")
    st = ReplicationStream(s.port)
    c.call("RESTORE", "k", "100000", payload)
    c.call("RESTORE", "k0", "0", payload)
    c.call("RESTORE", "gone", "1", payload, "ABSTTL")           # never existed: nothing
    c.call("SET", "old", "x")
    c.call("RESTORE", "old", "1", payload, "ABSTTL", "REPLACE")  # replaced by nothing
    got = [line for line in st.commands(c) if not line.startswith("set ")]
    st.c.close()
    assert [line.split(" ")[0] for line in got] == ["restore", "restore", "del"]
    k, k0, old = (line.split(" ") for line in got)
    assert k[:3] == ["restore", "k", "<ms>"] and k[-1].upper() == "ABSTTL"
    assert k0[:3] == ["restore", "k0", "0"] and "ABSTTL" not in [w.upper() for w in k0]
    assert old == ["del", "old"]
