"""What a replica (and the AOF) receives for each command, against Debian's
redis-server 7.0.15: a test attaches to each server's replication stream
with SYNC, runs the same commands on both, and compares the commands that
arrive.  Commands whose effect is not in their arguments are logged as
Redis logs them: blocking and multi-key pops as the plain pop they did
(a replica must never block or choose a key), SPOP as SREM or DEL,
GETDEL as DEL, INCRBYFLOAT and HINCRBYFLOAT as the value they set, SET
with an expiry as SET ... PXAT, FLUSHALL even on empty databases.

A command that logs more than one command (XAUTOCLAIM's XCLAIMs, a write
with the DEL of the expired key it met first, MGET's expired keys) is
logged inside MULTI/EXEC, as Redis 7.0 wraps it, once (EXEC and scripts
are not wrapped twice); RANDOMKEY and SCAN log their DELs one by one.

Timestamps (PXAT, PEXPIREAT) are compared as "<ms>"; command names without
regard to case (Redis upper-cases the ones it rewrites).  Left out: GEOADD
(Redis logs it as ZADD, we as itself: same effect).  XREADGROUP logs
XGROUP SETID after its XCLAIMs as Redis 7.4 does (7.0 did not): its tests
compare with 7.0.15 without those SETIDs, and with the stream 7.4.1 logs."""
import glob
import os
import re
import time

import pytest

from conftest import REDIS_SERVER, SERVER, ServerProcess
from rawresp import RawConn
import ref74

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
    # Commands that log several commands: one MULTI/EXEC around them.
    "xautoclaim of deleted entries": [["XADD", "s", "1-0", "f", "v"], ["XADD", "s", "2-0", "f", "v"],
                                      ["XADD", "s", "3-0", "f", "v"], ["XGROUP", "CREATE", "s", "g", "0"],
                                      ["XREADGROUP", "GROUP", "g", "c1", "COUNT", "1", "NOACK", "STREAMS", "s", ">"],
                                      ["XCLAIM", "s", "g", "c1", "0", "2-0", "3-0", "FORCE", "JUSTID"],
                                      ["XDEL", "s", "2-0"], ["XAUTOCLAIM", "s", "g", "c2", "0", "0-0"],
                                      ["XAUTOCLAIM", "s", "g", "c3", "0", "0-0", "JUSTID"]],
    "xclaim of a deleted entry and another": [["XADD", "s", "1-0", "f", "v"], ["XADD", "s", "2-0", "f", "v"],
                                              ["XGROUP", "CREATE", "s", "g", "0"],
                                              ["XCLAIM", "s", "g", "c1", "0", "1-0", "2-0", "FORCE", "JUSTID"],
                                              ["XDEL", "s", "1-0"], ["XCLAIM", "s", "g", "c2", "0", "1-0", "2-0"],
                                              ["XCLAIM", "s", "g", "c2", "0", "2-0"]],
    "xreadgroup noack creating its consumer": [["XADD", "s", "1-0", "f", "v"], ["XGROUP", "CREATE", "s", "g", "$"],
                                               ["XADD", "s", "2-0", "f", "v"],
                                               ["XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "s", ">"],
                                               ["XADD", "s", "3-0", "f", "v"],
                                               ["XREADGROUP", "GROUP", "g", "c", "NOACK", "STREAMS", "s", ">"]],
    "exec of commands logging several": [["XADD", "s", "1-0", "f", "v"], ["XGROUP", "CREATE", "s", "g", "0"],
                                         ["XCLAIM", "s", "g", "c1", "0", "1-0", "FORCE"], ["MULTI"],
                                         ["XAUTOCLAIM", "s", "g", "c2", "0", "0-0"], ["SET", "k", "v"], ["EXEC"],
                                         ["MULTI"], ["SET", "k2", "v"], ["EXEC"]],
    "script's set_repl inside EXEC ends with the script": [
        ["MULTI"], ["EVAL", "redis.set_repl(redis.REPL_NONE); redis.call('set', 'a', '1')", "0"], ["SET", "b", "2"],
        ["INCR", "n"], ["EXEC"]],
    "script logging several, not wrapped twice": [["XADD", "s", "1-0", "f", "v"], ["XADD", "s", "2-0", "f", "v"],
                                                  ["XGROUP", "CREATE", "s", "g", "0"],
                                                  ["XCLAIM", "s", "g", "c1", "0", "1-0", "2-0", "FORCE"],
                                                  ["EVAL", "redis.call('xautoclaim', KEYS[1], 'g', 'c2', 0, '0-0'); "
                                                   "return redis.call('set', 'k', 'v')", "1", "s"]],
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


EXPIRED_CASES = {
    # The DEL of a key found expired goes in the block of the command that
    # met it (Redis 7.0.15 and 7.4.1 alike).
    "write on an expired key": [["SET", "k", "1", "PX", "1"], "wait", ["INCR", "k"], ["INCR", "k"]],
    "read meeting two expired keys": [["SET", "e1", "1", "PX", "1"], ["SET", "e2", "1", "PX", "1"], "wait",
                                      ["MGET", "e1", "e2", "e3"]],
    "del meeting expired keys": [["SET", "e1", "1", "PX", "1"], ["SET", "e2", "1", "PX", "1"], ["SET", "k", "v"],
                                 "wait", ["DEL", "e1", "e2", "k"]],
    "one expired key read: no MULTI": [["SET", "e1", "1", "PX", "1"], "wait", ["GET", "e1"]],
    "exec meeting an expired key": [["SET", "e1", "1", "PX", "1"], "wait", ["MULTI"], ["INCR", "e1"],
                                    ["INCR", "x"], ["EXEC"]],
    "scan meeting expired keys: never wrapped": [["SET", "e1", "1", "PX", "1"], ["SET", "e2", "1", "PX", "1"],
                                                 "wait", ["SCAN", "0", "COUNT", "100"]],
}


def run_with_expiry(conns, cmds):
    for c in conns:
        c.call("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    try:
        for cmd in cmds:
            if cmd == "wait":
                time.sleep(0.01)
                continue
            replies = [c.call(*cmd) for c in conns]
            assert type(replies[0]) is type(replies[1]), (cmd, replies)
    finally:
        for c in conns:
            c.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")


@pytest.mark.parametrize("name", list(EXPIRED_CASES))
def test_expired_keys_a_command_meets_are_logged_in_its_block(pair, name):
    conns, streams, _ = pair
    fresh(conns, streams)
    run_with_expiry(conns, EXPIRED_CASES[name])
    got = logged(conns, streams)
    if name.startswith("scan"):  # the order of SCAN's keys is the dict's
        got = [sorted(x) for x in got]
    assert got[0] == got[1], name
    if name == "write on an expired key":
        assert got[0][1:] == ["multi", "del k", "incr k", "exec", "incr k"]


def without_setid(lines):
    """Redis 7.0.15's XREADGROUP stream from ours: XGROUP SETID (which 7.4
    added after the XCLAIMs) dropped, and a MULTI/EXEC left around one
    command unwrapped, as 7.0 then logs it."""
    lines = [x for x in lines if not x.lower().startswith("xgroup setid")]
    out, i = [], 0
    while i < len(lines):
        if lines[i] == "multi" and i + 2 < len(lines) and lines[i + 2] == "exec":
            out.append(lines[i + 1])
            i += 3
            continue
        out.append(lines[i])
        i += 1
    return out


XREADGROUP_SCRIPT = [["XADD", "s", "1-0", "f", "v"], ["XADD", "s", "2-0", "f", "v"],
                     ["XGROUP", "CREATE", "s", "g", "0"],
                     ["XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "s", ">"],
                     ["XADD", "s", "3-0", "f", "v"],
                     ["XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">"]]
# What Redis 7.4.1 logs for XREADGROUP_SCRIPT (timestamps as "<ms>").
XREADGROUP_74 = [
    "xadd s 1-0 f v", "xadd s 2-0 f v", "xgroup CREATE s g 0",
    "multi", "xclaim s g c1 0 1-0 TIME <ms> RETRYCOUNT 1 FORCE JUSTID LASTID 1-0",
    "xclaim s g c1 0 2-0 TIME <ms> RETRYCOUNT 1 FORCE JUSTID LASTID 2-0", "xgroup SETID s g 2-0 ENTRIESREAD 2", "exec",
    "xadd s 3-0 f v",
    "multi", "xclaim s g c2 0 3-0 TIME <ms> RETRYCOUNT 1 FORCE JUSTID LASTID 3-0",
    "xgroup SETID s g 3-0 ENTRIESREAD 3", "exec"]


def test_xreadgroup_claims_and_setid_are_one_block(pair):
    """XREADGROUP creating its consumer and claiming: the XCLAIMs (which
    create the consumer on a replica: no XGROUP CREATECONSUMER) and the
    SETID in one MULTI/EXEC, as Redis 7.4.1 logs them; Redis 7.0.15 logs the
    same less the SETID."""
    conns, streams, _ = pair
    fresh(conns, streams)
    for cmd in XREADGROUP_SCRIPT:
        replies = [c.call(*cmd) for c in conns]
        assert replies[0] == replies[1], (cmd, replies)
    ours, redis70 = logged(conns, streams)
    assert ours == XREADGROUP_74
    assert without_setid(ours) == redis70


HPEXPIREAT_SCRIPT = [["HSET", "h", "f1", "v", "f2", "v", "f3", "v"], ["HPEXPIREAT", "h", "1", "FIELDS", "2", "f1", "f2"],
                     ["HSET", "h2", "f1", "v", "f2", "v"], ["HPEXPIREAT", "h2", "1", "FIELDS", "2", "f1", "f2"]]
# What Redis 7.4.1 logs for HPEXPIREAT_SCRIPT: a TTL in the past deletes
# the fields, one HDEL each, in one block (even the hash's last fields).
HPEXPIREAT_74 = ["hset h f1 v f2 v f3 v", "multi", "hdel h f1", "hdel h f2", "exec",
                 "hset h2 f1 v f2 v", "multi", "hdel h2 f1", "hdel h2 f2", "exec"]


@pytest.mark.parametrize("script, expect", [(XREADGROUP_SCRIPT, XREADGROUP_74), (HPEXPIREAT_SCRIPT, HPEXPIREAT_74)],
                         ids=["xreadgroup", "hpexpireat"])
def test_as_redis_74_logs_it(start_server, script, expect):
    """Ours against the stream 7.4.1 logs, and against a live 7.4.1 when
    utils/dev/redis74-ref.sh has built one."""
    binaries = [SERVER]
    live = ref74.binary()
    if live:
        binaries.append(live)
    for b in binaries:
        s = start_server(args=["--save", ""], binary=b)
        c = RawConn(s.port)
        st = ReplicationStream(s.port)
        for cmd in script:
            c.call(*cmd)
        got = st.commands(c)
        st.c.close()
        assert got == expect, b


def test_a_served_blocked_xreadgroup_is_one_block(pair):
    conns, streams, ports = pair
    fresh(conns, streams)
    for c in conns:
        c.call("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    waiters = []
    for port in ports:
        w = RawConn(port)
        w.send("XREADGROUP", "GROUP", "g", "c1", "BLOCK", "0", "STREAMS", "s", ">")
        waiters.append(w)
    time.sleep(0.2)
    for c in conns:
        c.call("XADD", "s", "1-0", "f", "v")
    for w in waiters:
        assert w.read() is not None
        w.close()
    ours, redis70 = logged(conns, streams)
    assert ours[-4:] == ["multi", "xclaim s g c1 0 1-0 TIME <ms> RETRYCOUNT 1 FORCE JUSTID LASTID 1-0",
                         "xgroup SETID s g 1-0 ENTRIESREAD 1", "exec"]
    # The consumer comes into being when the client blocks (Redis 7.2+);
    # we log it then, so that a replica has it even when nothing comes
    # (Redis 7.4 logs nothing; 7.0 created it only when served).
    assert ours[1] == "xgroup CREATECONSUMER s g c1"
    assert without_setid(ours[:1] + ours[2:]) == redis70


def aof_commands(directory):
    """The commands of the incremental AOF files in directory/appendonlydir,
    normalized as ReplicationStream.commands does (SELECT kept out)."""
    data = b"".join(open(f, "rb").read() for f in sorted(glob.glob(os.path.join(directory, "appendonlydir",
                                                                                 "*.incr.aof"))))
    out, i = [], 0
    while i < len(data):
        assert data[i:i + 1] == b"*", data[i:i + 40]
        j = data.index(b"\r\n", i)
        n, i, words = int(data[i + 1:j]), j + 2, []
        for _ in range(n):
            j = data.index(b"\r\n", i)
            size = int(data[i + 1:j])
            words.append(data[j + 2:j + 2 + size].decode(errors="replace"))
            i = j + 4 + size
        words[0] = words[0].lower()
        if words[0] != "select":
            out.append(" ".join(re.sub(r"^1\d{12}$", "<ms>", w) for w in words))
    return out


def test_the_aof_gets_the_same_blocks(start_server, tmp_path):
    """appendonly yes: the incremental AOF holds the same MULTI/EXEC blocks
    as Redis 7.0.15's (a write on an expired key, XCLAIM of two entries,
    XAUTOCLAIM of a deleted entry), and the blocks load back."""
    cmds = [["SET", "k", "1", "PX", "1"], "wait", ["INCR", "k"],
            ["XADD", "s", "1-0", "f", "v"], ["XADD", "s", "2-0", "f", "v"], ["XGROUP", "CREATE", "s", "g", "0"],
            ["XCLAIM", "s", "g", "c1", "0", "1-0", "2-0", "FORCE", "JUSTID"], ["XDEL", "s", "1-0"],
            ["XAUTOCLAIM", "s", "g", "c2", "0", "0-0"]]
    got, servers = [], []
    for b in (SERVER, REDIS_SERVER):
        d = tmp_path / os.path.basename(b)
        d.mkdir()
        s = start_server(args=["--save", "", "--appendonly", "yes", "--appendfsync", "always", "--dir", str(d),
                               "--enable-debug-command", "yes"], binary=b)
        servers.append((s, d, b))
    conns = [RawConn(s.port) for s, _, _ in servers]
    run_with_expiry(conns, cmds)
    for s, d, _ in servers:
        got.append(aof_commands(str(d)))
    assert got[0] == got[1], got
    assert got[0][1:5] == ["multi", "del k", "incr k", "exec"]
    # INCR with its DEL, XCLAIM's two XCLAIMs, XAUTOCLAIM's two
    assert got[0].count("multi") == got[0].count("exec") == 3
    assert got[0][-1] == "exec" and got[0][-4] == "multi" and got[0][-5] == "xdel s 1-0"
    s, d, b = servers[0]
    s.stop()
    again = start_server(args=["--save", "", "--appendonly", "yes", "--dir", str(d)], binary=b)
    c = RawConn(again.port)
    assert c.call("GET", "k") == b"1"
    assert c.call("XPENDING", "s", "g")[0] == 1
