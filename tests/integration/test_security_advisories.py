"""Redis's published security advisories (2021-2025) that are not about Lua
scripting, each replayed as a regression test against our server, plus the
holes of the same kind found in our own code.

Every test writes a canary key first, runs the advisory's trigger, checks
the answer (compared byte for byte with Debian's redis-server 7.0.15, which
carries the backported fixes, wherever Redis's answer is the spec), then
checks that the server still answers PING and still holds the canary.
Big-memory triggers (multi-gigabyte arguments) are replayed at a size that
keeps each test within seconds and a few MB, by lowering the limit they
guard instead of raising the input (DEBUG LISTPACK-SAFETY-LIMIT is ours).
"""
import os
import socket
import struct
import subprocess
import threading
import time

import pytest

from benchlib import resp
from compat74 import Acl74Conn  # 7.4's sanitize-payload flag on 7.0's ACL GETUSER/LIST
from conftest import REDIS_SERVER, ROOT, SERVER, closed_by_server
from test_dump import crc64
from rawresp import ExactConn


@pytest.fixture(scope="module", autouse=True)
def _asan_segv(asan_segv_in_charge):
    """ASan reports a fault here itself (conftest.asan_segv_in_charge)."""

BIN_DIR = os.path.dirname(os.environ.get("RL_SERVER", os.path.join(ROOT, "src", "x")))
pytestmark = pytest.mark.differential


def tool(name):
    p = os.path.join(BIN_DIR, name)
    return p if os.path.exists(p) else os.path.join(ROOT, "src", name)


# ------------------------------------------------------------------ helpers

@pytest.fixture
def pair(server, redis_ref):
    """Exact connections to ours and to Redis 7.0.15, both flushed, each with
    a canary key written before the trigger."""
    conns = [ExactConn(server.port), Acl74Conn(ExactConn(redis_ref.port))]
    for c in conns:
        assert c.call("FLUSHALL")[1] == b"OK"
        assert c.call("SET", "canary", "alive")[1] == b"OK"
    yield conns
    for c in conns:
        c.close()


def same(conns, *cmd):
    """Run cmd on both servers, assert the replies are the same bytes,
    return the reply's value."""
    got = [c.call(*cmd) for c in conns]
    assert got[0][0] == got[1][0], (cmd[:4], got[0][0][:300], got[1][0][:300])
    return got[0][1]


def assert_alive(conn):
    """The server answers and kept the data written before the trigger."""
    assert conn.call("PING")[1] == b"PONG"
    assert conn.call("GET", "canary")[1] == b"alive"


def err(value):
    """The text of an error reply value (ExactConn's ("err", bytes))."""
    assert isinstance(value, tuple) and value[0] == "err", value
    return value[1].decode()


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def both_servers(start_server, args):
    """Ours and Redis 7.0.15 started with the same extra arguments."""
    return [start_server(args=args), start_server(args=args, binary=REDIS_SERVER)]


# --------------------------------------------------------------- 2021

def test_cve_2021_29477_and_2021_32625_lcs_table_overflow(pair):
    """STRALGO LCS (LCS in 7.0) sized its dynamic-programming table with a
    32-bit product of the two lengths, so two strings of ~70 KB wrapped it
    and the table was overflowed (the first fix missed one multiplication)."""
    for c in pair:
        c.call("SET", "a", "x" * 70000)
        c.call("SET", "b", "x" * 70000)
        c.call("SET", "c", "y" * 30000)
    e = same(pair, "LCS", "a", "b")
    assert "proto-max-bulk-len" in err(e)
    same(pair, "LCS", "a", "c", "LEN")
    same(pair, "LCS", "c", "a", "IDX", "MINMATCHLEN", "2")
    for c in pair:
        c.call("SET", "s1", "ohmytext")
        c.call("SET", "s2", "mynewtext")
    assert same(pair, "LCS", "s1", "s2") == b"mytext"
    for c in pair:
        assert_alive(c)


def test_cve_2021_32627_and_2021_32628_huge_elements_in_packed_encodings(pair):
    """With proto-max-bulk-len raised, elements of several GB overflowed the
    32-bit sizes of ziplists and listpacks (hashes, sorted sets, lists,
    streams); Redis now keeps packed encodings under 1 GB (converting, or
    refusing XADD with 'too large').  Replayed here with the 1 GB safety
    limit lowered to 1 MB on ours (DEBUG LISTPACK-SAFETY-LIMIT), and the
    config changes compared with Redis."""
    ours, ref = pair
    same(pair, "CONFIG", "SET", "proto-max-bulk-len", "10000000000")
    same(pair, "CONFIG", "SET", "client-query-buffer-limit", "10000000000")
    same(pair, "CONFIG", "SET", "hash-max-ziplist-value", "1000000000")
    same(pair, "CONFIG", "SET", "zset-max-ziplist-value", "1000000000")
    same(pair, "CONFIG", "SET", "stream-node-max-bytes", "0")
    try:
        assert ours.call("DEBUG", "LISTPACK-SAFETY-LIMIT", 1 << 20)[1] == b"OK"
        big = "x" * 400000
        for j in range(4):                   # the fourth would pass 1 MB
            assert ours.call("HSET", "h", str(j), big)[1] == 1
            assert ours.call("ZADD", "z", j, big + str(j))[1] == 1
        assert ours.call("OBJECT", "ENCODING", "h")[1] == b"hashtable"
        assert ours.call("OBJECT", "ENCODING", "z")[1] == b"skiplist"
        assert ours.call("HLEN", "h")[1] == 4 and ours.call("ZCARD", "z")[1] == 4
        assert ours.call("HSTRLEN", "h", "3")[1] == 400000
        # One stream record larger than the limit: refused, stream untouched.
        assert ours.call("XADD", "s", "1-1", "f", "v")[1] == b"1-1"
        e = ours.call("XADD", "s", "*", "f", "y" * (1 << 20))[1]
        assert "too large" in err(e)
        assert ours.call("XLEN", "s")[1] == 1
        # Records that fit, one by one: each starts a new node past the limit.
        for j in range(4):
            ours.call("XADD", "s", "*", "f", big)
        assert ours.call("XLEN", "s")[1] == 5
        # Lists: each big element gets a node of its own; one that no
        # listpack may hold is refused (Redis 7.0 would store it in a plain
        # node, which we do not have; Redis 6.2 refused it with this text).
        for j in range(4):
            ours.call("RPUSH", "l", big)
        assert ours.call("LLEN", "l")[1] == 4
        assert len(ours.call("LINDEX", "l", 3)[1]) == 400000
        huge = "y" * (1 << 20)
        for cmd in (("RPUSH", "l", "a", huge), ("LPUSH", "l2", huge), ("LSET", "l", "0", huge),
                    ("LINSERT", "l", "BEFORE", big, huge)):
            assert err(ours.call(*cmd)[1]) == "ERR Element too large", cmd
        assert ours.call("LLEN", "l")[1] == 4 and ours.call("EXISTS", "l2")[1] == 0
    finally:
        ours.call("DEBUG", "LISTPACK-SAFETY-LIMIT", 0)
        for c in pair:
            for name, value in (("proto-max-bulk-len", "512mb"), ("client-query-buffer-limit", "1gb"),
                                ("hash-max-ziplist-value", "64"), ("zset-max-ziplist-value", "64"),
                                ("stream-node-max-bytes", "4096")):
                c.call("CONFIG", "SET", name, value)
    # The bound is back: the same 400 KB fields stay packed under it.
    ours.call("CONFIG", "SET", "hash-max-ziplist-value", "1000000000")
    ours.call("DEL", "h")
    for j in range(4):
        ours.call("HSET", "h", str(j), big)
    assert ours.call("OBJECT", "ENCODING", "h")[1] == b"listpack"
    ours.call("CONFIG", "SET", "hash-max-ziplist-value", "64")
    assert_alive(ours)
    assert_alive(ref)


def test_cve_2021_32675_unauthenticated_multibulk_preallocation(start_server):
    """An unauthenticated client could announce a huge multibulk count or
    bulk length and make the server preallocate for it; Redis now allows an
    unauthenticated client 10 arguments of 16 KB at most."""
    for s in both_servers(start_server, ("--requirepass", "pw")):
        before = s.client(password="pw").info("memory")["used_memory"]
        socks = []
        for payload, text in ((b"*100\r\n", b"unauthenticated multibulk length"),
                              (b"*1\r\n$100000000\r\n", b"unauthenticated bulk length"),
                              (b"*1\r\n$16385\r\n", b"unauthenticated bulk length")):
            so = socket.create_connection(("127.0.0.1", s.port), timeout=5)
            so.sendall(payload)
            got = b""
            while not got.endswith(b"\r\n"):
                got += so.recv(1000)
            assert got == b"-ERR Protocol error: " + text + b"\r\n", got
            assert closed_by_server(so)
            socks.append(so)
        # Ten arguments and 16 KB are still fine before AUTH.
        so = socket.create_connection(("127.0.0.1", s.port), timeout=5)
        so.sendall(resp("ECHO", "x" * 16384))
        assert so.recv(100).startswith(b"-NOAUTH")
        so.close()
        r = s.client(password="pw")
        assert r.info("memory")["used_memory"] - before < 2 << 20
        assert r.ping()


def _debugger_session(port, payload):
    """SCRIPT DEBUG SYNC, a script, then payload as the debugger's input:
    every byte the server sends until it closes the link (a sync session
    ends with the connection) or goes quiet for a second."""
    s = socket.create_connection(("127.0.0.1", port), timeout=1)
    s.sendall(b"SCRIPT DEBUG SYNC\r\n")
    assert s.recv(100) == b"+OK\r\n"
    s.sendall(b"EVAL \"return 'hello'\" 0\r\n")
    got = b""
    while b"<endsession>" not in got and b"hello" not in got:
        got += s.recv(4096)      # the session's opening lines
    s.sendall(payload)
    out = b""
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            out += chunk
    except socket.timeout:
        pass
    s.close()
    return out


def test_cve_2021_32672_debugger_protocol_parsing(pair, server, redis_ref):
    """The script debugger reads its commands with a RESP parser of its own;
    Redis's read past its buffer on a request that lied about its sizes.
    Lying, negative, huge and truncated counts and lengths: the same
    answer as Redis (an unknown command, or a protocol error that ends the
    session), and the server runs on with its data."""
    payloads = [b"*1\r\n$-5\r\n", b"*999999999\r\n", b"*1\r\n$3\r\nabcdef\r\n", b"*-1\r\n",
                b"*1\r\n$2147483647\r\nx\r\n", b"*1\r\nfoo\r\n", b"hello\r\n", b"*0\r\n",
                b"*1\r\n$11\r\nhello\x00world\r\n", b"*1\r\n$100\r\nab", b"*2\r\n$1\r\na\r\n"]
    for payload in payloads:
        got = [_debugger_session(p, payload) for p in (server.port, redis_ref.port)]
        assert got[0] == got[1], (payload, got)
        for c in pair:
            assert_alive(c)


def test_cve_2021_32687_and_2021_29478_intset_entries_limit(pair):
    """set-max-intset-entries set huge let an intset grow past what its
    32-bit size arithmetic could hold (and COPY duplicated it with the same
    overflow); Redis caps intsets at 2^30 entries whatever the setting."""
    same(pair, "CONFIG", "SET", "set-max-intset-entries", "4294967296")
    same(pair, "CONFIG", "GET", "set-max-intset-entries")
    members = [str(i * 1000003) for i in range(-600, 600)]
    same(pair, "SADD", "s", *members)
    same(pair, "OBJECT", "ENCODING", "s")
    same(pair, "SADD", "s", "9223372036854775807", "-9223372036854775808")
    same(pair, "OBJECT", "ENCODING", "s")
    same(pair, "COPY", "s", "s2")
    same(pair, "SCARD", "s2")
    same(pair, "SINTERCARD", "2", "s", "s2")
    same(pair, "SMISMEMBER", "s2", "0", "1000003", "-600001800", "9223372036854775807")
    same(pair, "SUNIONSTORE", "u", "s", "s2")
    same(pair, "CONFIG", "SET", "set-max-intset-entries", "512")
    for c in pair:
        assert_alive(c)


def test_cve_2021_32762_tools_refuse_huge_multibulk_replies(tmp_path):
    """redis-cli and redis-sentinel (hiredis) could overflow parsing a reply
    that announces a huge multibulk count.  Our client-side tool, the
    benchmark, meets such a reply from a fake server: it must fail cleanly,
    not crash."""
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(8)
    port = lsock.getsockname()[1]
    stop = threading.Event()

    def fake():
        lsock.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = lsock.accept()
            except socket.timeout:
                continue
            try:
                conn.settimeout(2)
                conn.recv(65536)
                conn.sendall(b"*2305843009213693952\r\n*2305843009213693952\r\n:1\r\n")
                time.sleep(0.2)
            except OSError:
                pass
            conn.close()

    t = threading.Thread(target=fake, daemon=True)
    t.start()
    try:
        out = subprocess.run([tool("redis-like-benchmark"), "-p", str(port), "-n", "10", "-c", "1", "-t", "ping",
                              "-q"], capture_output=True, timeout=30)
    finally:
        stop.set()
        t.join()
        lsock.close()
    assert out.returncode >= 0, "killed by signal %d: %r" % (-out.returncode, out.stderr[-500:])


# --------------------------------------------------------------- 2021: sds growth

def test_cve_2021_41099_sds_growth_with_huge_proto_max_bulk_len(pair, start_server):
    """With proto-max-bulk-len raised near 2^63, string growth computed a
    size that overflowed (SETRANGE, APPEND, a bulk header) and the sds
    header was under-allocated; Redis checks offset+length for overflow.
    A bulk header of 2^63 bytes makes Redis 7.0 try to allocate it (and
    abort); ours must neither allocate it nor crash."""
    same(pair, "CONFIG", "SET", "proto-max-bulk-len", "9223372036854775807")
    # (An offset that does not overflow, such as 2^62, is a real request for
    # 4 EB: both servers' allocators abort on it, as on any failed malloc.)
    for off, val in ((9223372036854775807, "A"), (9223372036854775806, "AB"), (9223372036854775000, "x" * 1000)):
        e = same(pair, "SETRANGE", "k", off, val)
        assert "maximum allowed size" in err(e) or "out of range" in err(e), e
    same(pair, "SET", "k", "v")
    same(pair, "APPEND", "k", "w")
    same(pair, "CONFIG", "SET", "proto-max-bulk-len", "512mb")
    for c in pair:
        assert_alive(c)
    s = start_server(args=("--proto-max-bulk-len", "9223372036854775807",
                           "--client-query-buffer-limit", "9223372036854775807"))
    r = s.client()
    r.set("canary", "alive")
    so = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    so.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$9223372036854775000\r\n" + b"x" * 100000)
    time.sleep(0.3)
    assert r.info("memory")["used_memory_peak"] < 64 << 20
    so.close()
    assert r.ping() and r.get("canary") == "alive"


# --------------------------------------------------------------- 2022

def test_cve_2022_31144_xautoclaim_deleted_entries(pair):
    """XAUTOCLAIM wrote the IDs of deleted entries past the array it had
    sized for COUNT entries (a heap overflow when more than COUNT pending
    entries were deleted)."""
    for c in pair:
        for i in (1, 2, 3):
            c.call("XADD", "x", "%d-0" % i, "f", "v")
        c.call("XGROUP", "CREATE", "x", "grp", "0")
    same(pair, "XREADGROUP", "GROUP", "grp", "Alice", "STREAMS", "x", ">")
    same(pair, "XDEL", "x", "1-0")
    same(pair, "XDEL", "x", "2-0")
    assert same(pair, "XAUTOCLAIM", "x", "grp", "Bob", "0", "0-0", "COUNT", "1") == [b"2-0", [], [b"1-0"]]
    same(pair, "XAUTOCLAIM", "x", "grp", "Bob", "0", "2-0", "COUNT", "1")
    same(pair, "XAUTOCLAIM", "x", "grp", "Bob", "0", "3-0", "COUNT", "1")
    same(pair, "XPENDING", "x", "grp", "-", "+", "10", "Alice")
    # Many deleted entries behind a small COUNT.
    for c in pair:
        c.call("DEL", "y")
        for i in range(1, 201):
            c.call("XADD", "y", "%d-0" % i, "f", "v")
        c.call("XGROUP", "CREATE", "y", "g", "0")
        c.call("XREADGROUP", "GROUP", "g", "A", "STREAMS", "y", ">")
        c.call("XTRIM", "y", "MAXLEN", "0")
    same(pair, "XAUTOCLAIM", "y", "g", "B", "0", "0-0", "COUNT", "3")
    same(pair, "XAUTOCLAIM", "y", "g", "B", "0", "0-0", "COUNT", "100")
    same(pair, "XPENDING", "y", "g")
    for c in pair:
        assert_alive(c)


def test_cve_2022_35951_xautoclaim_count_overflow(pair):
    """XAUTOCLAIM's COUNT was multiplied into an allocation size that
    overflowed for huge counts; Redis now bounds COUNT."""
    for c in pair:
        c.call("XADD", "x", "1-0", "f", "v")
        c.call("XGROUP", "CREATE", "x", "grp", "0")
        c.call("XREADGROUP", "GROUP", "grp", "A", "STREAMS", "x", ">")
    for count in ("8070450532247928833", "9223372036854775807", "2305843009213693952", "0", "-1"):
        e = same(pair, "XAUTOCLAIM", "x", "grp", "Bob", "0", "3-0", "COUNT", count)
        assert err(e).startswith("ERR COUNT"), e
    same(pair, "XAUTOCLAIM", "x", "grp", "Bob", "0", "0-0", "COUNT", "1000")
    for c in pair:
        assert_alive(c)


def test_cve_2022_35977_setrange_and_sort_limit_overflow(pair):
    """SETRANGE's offset plus length and SORT's LIMIT offset plus count were
    added without an overflow check (a huge allocation, an assertion)."""
    for value in ("9223372036854775807", "2147483647", "4294967295"):
        e = same(pair, "SETRANGE", "K", value, "A")
        assert "maximum allowed size" in err(e)
    for c in pair:
        c.call("LPUSH", "L", "2", "1", "0")
    for off, cnt in (("2", "9223372036854775807"), ("9223372036854775807", "9223372036854775807"),
                     ("-9223372036854775808", "9223372036854775807"), ("1", "-9223372036854775808")):
        same(pair, "SORT_RO", "L", "BY", "a", "LIMIT", off, cnt)
        same(pair, "SORT", "L", "LIMIT", off, cnt)
        same(pair, "SORT", "L", "LIMIT", off, cnt, "STORE", "dst")
    for c in pair:
        assert_alive(c)


def test_cve_2022_36021_glob_exponential_backtracking(pair):
    """KEYS, SCAN MATCH and pattern subscriptions backtracked exponentially
    on patterns such as a*a*a*...b (a few hundred bytes kept the server
    busy for hours)."""
    for c in pair:
        c.call("SET", "a" * 40, "1")
    t0 = time.time()
    assert same(pair, "KEYS", "a*" * 20 + "b") == []
    same(pair, "SCAN", "0", "MATCH", "*a" * 60 + "*b", "COUNT", "1000")
    same(pair, "KEYS", "a*" * 30 + "a")
    assert time.time() - t0 < 2
    for c in pair:
        assert_alive(c)


def test_cve_2022_33105_xsetid_edge_ids_do_not_leak(server, pair):
    """Redis 7.0.0 leaked memory in streamGetEdgeID (the first and last
    entry of a stream, looked up by XSETID and XADD's ID checks).  Ours is
    replayed many times: memory must not climb with each call."""
    ours = pair[0]
    for c in pair:
        c.call("XADD", "s", "5-0", "f", "v")
        c.call("XADD", "s", "6-0", "f", "v")
        c.call("XDEL", "s", "6-0")
    same(pair, "XSETID", "s", "4-0")
    same(pair, "XSETID", "s", "7-0", "ENTRIESADDED", "2", "MAXDELETEDID", "6-0")
    same(pair, "XINFO", "STREAM", "s")
    r = server.client()
    r.xadd("s", {"f": "v"}, id="100-0")
    before = r.info("memory")["used_memory"]
    for i in range(20000):
        ours.send("XSETID", "s", "100-0")
    for i in range(20000):
        assert ours.read() == "OK"
    assert r.info("memory")["used_memory"] - before < 256 << 10
    assert_alive(ours)


# --------------------------------------------------------------- 2023

def test_cve_2023_22458_randfield_huge_negative_count(pair):
    """HRANDFIELD and ZRANDMEMBER with a huge negative count (and
    WITHVALUES/WITHSCORES doubling it) overflowed the reply's length."""
    for c in pair:
        c.call("HSET", "myhash", "a", "1")
        c.call("ZADD", "myzset", "0", "a")
    for n in ("-9223372036854770000", "-9223372036854775808", "-4611686018427387904"):
        for cmd in (("HRANDFIELD", "myhash", n, "WITHVALUES"), ("ZRANDMEMBER", "myzset", n, "WITHSCORES")):
            e = same(pair, *cmd)
            assert "out of range" in err(e)
    for c in pair:
        assert_alive(c)


def test_cve_2023_25155_randmember_count_overflow(pair):
    """SRANDMEMBER, ZRANDMEMBER and HRANDFIELD negated a count of -2^63,
    which overflows, and hit an assertion."""
    for c in pair:
        c.call("SADD", "myset", "a")
        c.call("HSET", "myhash", "a", "1")
        c.call("ZADD", "myzset", "0", "a")
    lo = "-9223372036854775808"
    for cmd in (("SRANDMEMBER", "myset", lo), ("HRANDFIELD", "myhash", lo), ("HRANDFIELD", "myhash", lo, "WITHVALUES"),
                ("ZRANDMEMBER", "myzset", lo), ("ZRANDMEMBER", "myzset", lo, "WITHSCORES")):
        assert "out of range" in err(same(pair, *cmd))
    same(pair, "SRANDMEMBER", "myset", "-3")
    for c in pair:
        assert_alive(c)


def test_cve_2023_28425_msetnx_same_key_twice(pair):
    """MSETNX naming the same new key twice added it twice and hit an
    assertion (a crash any user with write access could cause)."""
    assert same(pair, "MSETNX", "x1", "xxx", "x1", "yyy") == 1
    assert same(pair, "GET", "x1") == b"yyy"
    assert same(pair, "MSETNX", "x1", "xxx", "x1", "zzz") == 0
    assert same(pair, "GET", "x1") == b"yyy"
    same(pair, "MSETNX", "n1", "a", "n2", "b", "n1", "c", "n2", "d")
    same(pair, "MGET", "n1", "n2")
    for c in pair:
        assert_alive(c)


def test_cve_2023_28856_hincrbyfloat_invalid_field(pair):
    """HINCRBYFLOAT with an increment of inf or NaN on a new key created an
    empty (invalid) hash that crashed the server when accessed; Redis
    refuses the increment before creating anything."""
    for inc in ("+inf", "-inf", "inf", "nan"):
        same(pair, "HINCRBYFLOAT", "hfoo", "field", inc)
    assert same(pair, "EXISTS", "hfoo") == 0
    for c in pair:
        c.call("HSET", "h", "f", "1.7e308")
    same(pair, "HINCRBYFLOAT", "h", "f", "1.7e308")
    same(pair, "HGET", "h", "f")
    same(pair, "OBJECT", "ENCODING", "h")      # a 309-digit value: no longer a listpack
    same(pair, "HINCRBYFLOAT", "h", "new", "1.5")
    same(pair, "HMGET", "h", "f", "new")
    same(pair, "HLEN", "h")
    for c in pair:
        assert_alive(c)


def test_cve_2023_36824_getkeys_with_many_keys(pair):
    """Extracting the keys of a command with more than 256 keys (COMMAND
    GETKEYS, and the ACL check of a user with key patterns) grew a buffer
    without copying what it held: a heap overflow."""
    keys = ["key%d" % i for i in range(1, 261)]
    got = same(pair, "COMMAND", "GETKEYS", "ZUNIONSTORE", "target", len(keys), *keys)
    assert got == [b"target"] + [k.encode() for k in keys]
    same(pair, "COMMAND", "GETKEYSANDFLAGS", "ZUNIONSTORE", "target", len(keys), *keys)
    mset = []
    for k in keys + ["x%d" % i for i in range(300)]:
        mset += [k, "v"]
    same(pair, "COMMAND", "GETKEYS", "MSET", *mset)
    same(pair, "ACL", "SETUSER", "u", "on", "nopass", "~key*", "~target", "+@all")
    same(pair, "ACL", "DRYRUN", "u", "ZUNIONSTORE", "target", len(keys), *keys)
    same(pair, "ACL", "DRYRUN", "u", "MSET", *mset)
    for c in pair:
        c.call("AUTH", "u", "x")
    same(pair, "ZUNIONSTORE", "target", len(keys), *keys)
    same(pair, "MSET", *mset)
    for c in pair:
        c.call("AUTH", "default", "x")
        assert_alive(c)


def test_cve_2023_41053_sort_ro_by_get_bypass_acl(pair):
    """SORT_RO's key specification left out its BY and GET patterns, so a
    user limited to some keys could read any key through them; Redis now
    refuses BY/GET patterns to users without access to all keys."""
    for c in pair:
        c.call("RPUSH", "lst", "1", "2")
        c.call("SET", "secret_1", "s")
        c.call("SET", "w_1", "10")
    same(pair, "ACL", "SETUSER", "u", "on", "nopass", "~lst*", "+@all")
    same(pair, "COMMAND", "GETKEYS", "SORT_RO", "lst", "BY", "w_*", "GET", "secret_*")
    for c in pair:
        c.call("AUTH", "u", "x")
    for cmd in (("SORT_RO", "lst", "BY", "w_*"), ("SORT_RO", "lst", "GET", "secret_*"),
                ("SORT", "lst", "GET", "secret_*"), ("SORT", "lst", "BY", "w_*", "GET", "#"),
                ("SORT_RO", "lst", "BY", "nosort", "GET", "#")):
        same(pair, *cmd)
    for c in pair:
        c.call("AUTH", "default", "x")
    same(pair, "ACL", "LOG", "RESET")
    for c in pair:
        assert_alive(c)


def test_cve_2023_41056_sds_resize_keeps_its_header_type(pair, server):
    """sdsResize could shrink a string into a smaller header type without
    recording the new type, so its size read back wrong (seen in HLL
    promotion and the query-buffer resize of the client cron)."""
    ours = pair[0]
    big = "z" * 300000
    for c in pair:
        c.call("SET", "big", big)
        for i in range(0, 3000, 300):
            c.call("PFADD", "hll", *["e%d" % j for j in range(i, i + 300)])
    same(pair, "PFCOUNT", "hll")
    same(pair, "GET", "hll")                    # promoted to dense: the same bytes
    same(pair, "STRLEN", "big")
    # A query buffer grown by a 300 KB argument, then left idle for the
    # cron to shrink it, must still parse what comes next.
    time.sleep(2.2)
    for c in pair:
        c.call("SET", "after", "x" * 40)
    same(pair, "GET", "after")
    same(pair, "GETRANGE", "big", "299990", "-1")
    assert int(ours.call("MEMORY", "USAGE", "big")[1]) >= 300000
    for c in pair:
        assert_alive(c)


def test_cve_2023_45145_unix_socket_never_looser_than_unixsocketperm(start_server, tmp_path):
    """Redis listened on its unix socket before chmod'ing it to
    unixsocketperm, so under a permissive umask another local user could
    connect in between.  The socket must be made with its final mode before
    listen(): under umask 000 we trace bind/chmod/listen and check the
    order, and check the file's mode once up."""
    path = str(tmp_path / "s.sock")
    log = str(tmp_path / "strace.log")
    old = os.umask(0)
    try:
        s = start_server(args=("--unixsocket", path, "--unixsocketperm", "700"),
                         launcher=("strace", "-f", "-qq", "-o", log, "-e",
                                   "trace=bind,listen,chmod,fchmod,fchmodat,umask"))
    finally:
        os.umask(old)
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o700)
    with open(log) as f:
        lines = f.read().splitlines()
    bind_at = [i for i, l in enumerate(lines) if "bind(" in l and path in l]
    assert bind_at, lines
    # The fd of the unix socket, then its listen().
    fd = lines[bind_at[0]].split("bind(", 1)[1].split(",", 1)[0]
    listen_at = [i for i, l in enumerate(lines) if "listen(%s," % fd in l and i > bind_at[0]]
    assert listen_at, lines
    made_safe = [i for i, l in enumerate(lines) if i < listen_at[0] and (
        ("chmod" in l and path in l and "0700" in l) or ("umask(0" in l and i < bind_at[0] and "077" in l))]
    assert made_safe, "\n".join(lines[max(0, bind_at[0] - 5):listen_at[0] + 2])
    so = socket.socket(socket.AF_UNIX)
    so.connect(path)
    so.sendall(b"PING\r\n")
    assert so.recv(10) == b"+PONG\r\n"
    so.close()
    assert s.client().ping()


# --------------------------------------------------------------- 2024

MALFORMED_SELECTORS = [
    "%~abc", "%", "%R", "%W", "%RW", "%~", "%X~a", "%RR~a", "%RWR~a", "%R~", "%W~", "%RW~", "%w~a", "%r~a",
    "(%~abc)", "(%)", "(%R)", "(%RW)", "(%~)", "(%R~)", "(~)", "()", "(", ")", "(~a", "~a)", "((~a))",
    "(+get ~a", "(%RW~a &b)", "(on)", "(>pw)", "(nopass)", "(allkeys) (allkeys)", "(resetkeys %R~x %W~y)",
    "(%R~a*b %W~c)", "%~", "%%~a", "%R%W~a",
]


def test_cve_2024_31227_acl_rw_selector_without_permission(pair):
    """ACL SETUSER accepted a %~pattern key selector with neither R nor W,
    which later crashed the permission check; Redis now refuses it."""
    for rule in ("%~abc", "%~", "%~*", "(%~abc)"):
        e = same(pair, "ACL", "SETUSER", "u", rule)
        assert err(e) == "ERR Error in ACL SETUSER modifier '%s': Syntax error" % rule, e
    same(pair, "ACL", "SETUSER", "u", "on", "nopass", "%R~abc", "%W~def", "+@all")
    same(pair, "ACL", "GETUSER", "u")
    same(pair, "ACL", "LIST")
    same(pair, "ACL", "DRYRUN", "u", "GET", "abc")
    same(pair, "ACL", "DRYRUN", "u", "GET", "def")
    same(pair, "ACL", "DRYRUN", "u", "SET", "def", "1")
    for c in pair:
        assert_alive(c)


def test_cve_2024_51741_acl_malformed_selectors(pair):
    """ACL SETUSER with malformed selectors ('(', '%' without a pattern...)
    could crash the server; each must be refused with Redis's text, or
    taken as Redis takes it, and leave the user intact."""
    # Users of earlier tests go: their rule history prints as written here
    # (7.4) but as a computed list on 7.0.15.
    same(pair, "ACL", "DELUSER", "u", "v")
    same(pair, "ACL", "SETUSER", "u", "on", "nopass", "~k*", "+get")
    for rule in MALFORMED_SELECTORS:
        same(pair, "ACL", "SETUSER", "u", rule)
        same(pair, "ACL", "SETUSER", "v", "on", rule, "nopass")
        same(pair, "ACL", "GETUSER", "u")
        same(pair, "ACL", "DRYRUN", "u", "GET", "kx")
    same(pair, "ACL", "LIST")
    for c in pair:
        assert_alive(c)


def test_cve_2024_31228_long_patterns_do_not_recurse_without_bound(pair):
    """KEYS, SCAN, PSUBSCRIBE and ACL key and channel patterns were matched
    recursively with no bound on the pattern, so a long one could exhaust
    the stack or the CPU; Redis (7.0.15 as Debian ships it) stops after
    1000 nested stars and treats the pattern as not matching."""
    ours, ref = pair
    for c in pair:
        c.call("SET", "a" * 50000, "1")
    t0 = time.time()
    assert same(pair, "KEYS", "*?" * 50000) == []
    same(pair, "SCAN", "0", "MATCH", "*?" * 50000, "COUNT", "100")
    assert time.time() - t0 < 5
    for c in pair:
        c.call("FLUSHALL")
        c.call("SET", "canary", "alive")
    for n in (999, 1000, 1001, 1100):
        key = "a" * n
        for c in pair:
            c.call("SET", key, "1")
        same(pair, "KEYS", "a*" * n)
        same(pair, "SCAN", "0", "MATCH", "a*" * n, "COUNT", "10000")
        same(pair, "ACL", "SETUSER", "u", "reset", "on", "nopass", "+@all", "~" + "a*" * n, "&" + "a*" * n)
        same(pair, "ACL", "DRYRUN", "u", "GET", key)
        same(pair, "ACL", "DRYRUN", "u", "PUBLISH", key, "m")
        for c in pair:
            c.call("DEL", key)
    subs = [ExactConn(ours.sock.getpeername()[1]), ExactConn(ref.sock.getpeername()[1])]
    for s in subs:
        s.call("PSUBSCRIBE", "a*" * 1001)
        s.call("PSUBSCRIBE", "a*" * 999)
    same(pair, "PUBLISH", "a" * 1001, "m")
    same(pair, "PUBLISH", "a" * 999, "m")
    for s in subs:
        s.close()
    for c in pair:
        assert_alive(c)


# --------------------------------------------------------------- 2025

def pipeline_without_reading(port, total, chunk=None):
    """Send total bytes of pipelined PINGs on a socket whose receive buffer
    is small and never read; returns (bytes sent, closed by the server)."""
    chunk = chunk or b"PING\r\n" * 10000
    so = socket.socket()
    so.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    so.connect(("127.0.0.1", port))
    so.settimeout(2)
    sent = 0
    closed = False
    try:
        while sent < total:
            so.sendall(chunk)
            sent += len(chunk)
    except (socket.timeout, OSError) as e:
        closed = not isinstance(e, socket.timeout)
    if not closed:
        closed = closed_by_server(so, timeout=5)
    so.close()
    return sent, closed


def test_cve_2025_21605_unauthenticated_output_buffer_is_bounded(start_server):
    """An unauthenticated client that pipelines requests without reading
    the -NOAUTH replies made the server buffer them without limit; Redis
    now closes a client that has never authenticated once its output
    buffer holds more than 1 KB beyond the static reply buffer."""
    for s in both_servers(start_server, ("--requirepass", "pw")):
        r = s.client(password="pw")
        r.set("canary", "alive")
        before = rss_kb(s.pid)
        sent, closed = pipeline_without_reading(s.port, 200 << 20)
        assert closed, (s.binary, sent)
        assert rss_kb(s.pid) - before < 8 << 10, (s.binary, rss_kb(s.pid) - before)
        assert r.ping() and r.get("canary") == "alive"
        if s.binary == SERVER:
            assert "output buffer limits" in s.read_log()
            # An authenticated client is held to the normal limits only.
            so = socket.create_connection(("127.0.0.1", s.port), timeout=5)
            so.sendall(b"AUTH pw\r\n")
            assert so.recv(100) == b"+OK\r\n"
            so.sendall(b"PING\r\n" * 20000)
            got = b""
            while len(got) < 7 * 20000:
                got += so.recv(1 << 20)
            so.close()


def test_unauthenticated_clients_have_tight_limits(start_server):
    """Ours (found here): before AUTH a client could make the server hold
    gigabytes of replies (above).  Compared with Redis 7.0.15 here: what an
    unauthenticated client may still send (10 arguments of 16 KB, an inline
    request of 64 KB), that a paused server still answers it -NOAUTH at
    once (so its replies, not its requests, pile up: the 1 KB output limit
    closes it), and that the same pipeline is fine once authenticated.  Ours
    also closes one whose query buffer passes 1 MB (Redis 7.4's rule)."""
    for s in both_servers(start_server, ("--requirepass", "pw")):
        r = s.client(password="pw")
        r.set("canary", "alive")
        # The largest request allowed before AUTH is still read and refused.
        so = socket.create_connection(("127.0.0.1", s.port), timeout=5)
        so.sendall(resp("SET", *(["x" * 16384] * 9)))
        assert so.recv(100).startswith(b"-NOAUTH"), s.binary
        so.sendall(b"PING " + b"x" * 70000)
        got = b""
        while not got.endswith(b"\r\n"):
            got += so.recv(1000)
        assert got == b"-ERR Protocol error: too big inline request\r\n", (s.binary, got)
        assert closed_by_server(so)
        so.close()
        # Paused: the -NOAUTH replies still come (and are capped).
        r.execute_command("CLIENT", "PAUSE", "3000", "ALL")
        try:
            sent, closed = pipeline_without_reading(s.port, 64 << 20)
            assert closed, (s.binary, sent)
        finally:
            r.execute_command("CLIENT", "UNPAUSE")
        # Authenticated, the same pipeline is served in full.
        so = socket.create_connection(("127.0.0.1", s.port), timeout=10)
        so.sendall(b"AUTH pw\r\n" + b"PING\r\n" * 300000)
        want = 5 + 7 * 300000
        got = 0
        while got < want:
            chunk = so.recv(1 << 20)
            assert chunk, (s.binary, got)
            got += len(chunk)
        so.close()
        assert r.ping() and r.get("canary") == "alive"


def test_cve_2025_27151_check_aof_long_file_name(tmp_path):
    """redis-check-aof copied its file-name argument into a fixed stack
    buffer (a stack overflow with a long name).  Our check tools must refuse
    or report such a name, never crash."""
    long_names = ["a" * 5000, str(tmp_path / ("b" * 255)) + "/" + "c" * 5000, "/" + "d/" * 3000 + "x.aof",
                  "e" * 100000]
    for binary in (tool("redis-like-check-aof"), tool("redis-like-check-rdb")):
        for name in long_names:
            out = subprocess.run([binary, name], capture_output=True, timeout=30)
            assert out.returncode > 0, (binary, len(name), out.returncode, out.stderr[-300:])
        if binary.endswith("check-aof"):
            out = subprocess.run([binary, "--fix", "f" * 5000 + ".manifest"], capture_output=True, timeout=30)
            assert out.returncode > 0
            out = subprocess.run([binary, "--truncate-to-timestamp", "1", "g" * 5000], capture_output=True, timeout=30)
            assert out.returncode > 0


def hll_sparse(opcodes, cache_valid=False):
    """A sparse HyperLogLog string: 'HYLL', encoding 1, three unused bytes,
    the 8-byte cardinality cache (invalid unless cache_valid), opcodes."""
    return b"HYLL\x01\x00\x00\x00" + b"\x00" * 7 + (b"\x00" if cache_valid else b"\x80") + opcodes


def xzero(n):
    return bytes([0x40 | ((n - 1) >> 8), (n - 1) & 0xff])


def zero(n):
    return bytes([(n - 1) & 0x3f])


def val(v, n):
    return bytes([0x80 | ((v - 1) << 2) | (n - 1)])


HLL_CORRUPT = {
    # CVE-2025-32023: XZERO runs adding up past 2^32, then a VAL.
    "xzero-overflow": hll_sparse(xzero(16384) * (131072 + 1000) + val(32, 4)),
    "xzero-overflow-cached": hll_sparse(xzero(16384) * (131072 + 1000) + val(32, 4), cache_valid=True),
    "zero-past-end": hll_sparse(zero(64) * 300 + val(32, 4)),
    "val-past-end": hll_sparse(xzero(16383) + val(5, 4)),
    "trailing-xzero": hll_sparse(xzero(16384) + xzero(1)),
    "trailing-val": hll_sparse(xzero(16384) + val(3, 1)),
    "short": hll_sparse(xzero(16000)),
}


def test_cve_2025_32023_hll_sparse_runs_overflow(pair):
    """A crafted sparse HyperLogLog whose runs add up past the 16384
    registers (or past 2^32, wrapping the index) made PFCOUNT, PFMERGE and
    PFADD write out of bounds; Redis now answers INVALIDOBJ."""
    for name, payload in HLL_CORRUPT.items():
        if not name.startswith(("xzero", "zero", "val")):
            continue
        for c in pair:
            c.call("SET", "hll", payload)
            c.call("DEL", "dst")
        # Single-key PFCOUNT trusts a valid cached cardinality (both
        # servers answer the cache, 0, without reading the registers).
        cached = name.endswith("-cached")
        if cached:
            assert same(pair, "PFCOUNT", "hll") == 0
        for cmd in ((() if cached else (("PFCOUNT", "hll"),)) + (("PFCOUNT", "hll", "hll"), ("PFMERGE", "dst", "hll"),
                    ("PFDEBUG", "GETREG", "hll"))):
            got = same(pair, *cmd)
            assert got == ("err", b"INVALIDOBJ Corrupted HLL object detected"), (name, cmd, got)
        same(pair, "EXISTS", "dst")
        # PFADD only walks the opcodes up to the register it sets (Redis
        # answers 1 for some of these): the same answer, and no overflow.
        same(pair, "PFADD", "hll", "a", "b", "c")
        same(pair, "PFCOUNT", "hll", "hll")
    for c in pair:
        assert_alive(c)


def test_hll_trailing_opcodes_refused_by_every_reader(pair):
    """Ours (found here): a sparse HLL with opcodes past its last register
    was refused by single-key PFCOUNT but read by multi-key PFCOUNT and
    PFMERGE.  All readers validate alike, as Redis."""
    for name in ("trailing-xzero", "trailing-val", "short"):
        for c in pair:
            c.call("SET", "hll", HLL_CORRUPT[name])
            c.call("DEL", "dst")
            c.call("PFADD", "good", "x", "y")
        for cmd in (("PFCOUNT", "hll"), ("PFCOUNT", "hll", "good"), ("PFCOUNT", "good", "hll"),
                    ("PFMERGE", "dst", "hll"), ("PFMERGE", "good", "hll")):
            got = same(pair, *cmd)
            assert got == ("err", b"INVALIDOBJ Corrupted HLL object detected"), (name, cmd, got)
        same(pair, "PFCOUNT", "good")
        # PFADD's sparse update stops at the last register, as Redis's does:
        # whatever it answers, both must answer it.
        same(pair, "PFADD", "hll", "z")
    for c in pair:
        assert_alive(c)


def test_cve_2025_48367_accept_errors_do_not_starve_clients(start_server):
    """Connections reset before the server accepted them made accept()
    fail with a protocol error, and the server stopped accepting for that
    round, so a stream of them starved real clients.  Here thousands of
    connections are reset while a client connects and PINGs: it must get
    through quickly every time."""
    for s in both_servers(start_server, ()):
        r = s.client()
        r.set("canary", "alive")
        stop = threading.Event()

        def flood():
            linger = struct.pack("ii", 1, 0)
            while not stop.is_set():
                so = socket.socket()
                so.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                try:
                    so.connect(("127.0.0.1", s.port))
                except OSError:
                    pass
                so.close()

        threads = [threading.Thread(target=flood, daemon=True) for _ in range(2)]
        for t in threads:
            t.start()
        worst = 0.0
        times = []
        try:
            for _ in range(40):
                t0 = time.time()
                with socket.create_connection(("127.0.0.1", s.port), timeout=8) as so:
                    so.sendall(b"PING\r\n")
                    assert so.recv(10) == b"+PONG\r\n"
                times.append(time.time() - t0)
                worst = max(worst, times[-1])
                time.sleep(0.02)
        finally:
            stop.set()
            for t in threads:
                t.join()
        # A starved client would wait for ever; a SYN the kernel dropped
        # under the flood costs a 1 s retransmit on either server.
        assert worst < 3.5, (s.binary, worst)
        times.sort()
        assert times[len(times) // 2] < 0.3, (s.binary, times)
        assert r.ping() and r.get("canary") == "alive"


def test_cve_2025_62507_xackdel_is_not_a_command_here(pair):
    """Redis 8.2's XACKDEL could overflow a stack buffer with many IDs.
    Neither Redis 7.0 nor we have the command: it must be refused as
    unknown, with many IDs too."""
    ids = ["%d-0" % i for i in range(1, 2000)]
    e = same(pair, "XACKDEL", "s", "g", "IDS", len(ids), *ids)
    assert "unknown command" in err(e)
    for c in pair:
        assert_alive(c)


def test_cve_2021_32761_bitfield_offsets_past_512mb(pair):
    """BITFIELD on 32-bit builds computed byte offsets that overflowed for
    offsets near 2^32 bits; offsets past 512 MB are refused everywhere."""
    for off in ("4294967295", "4294967296", "#536870912", "#134217728", "-1", "9223372036854775807"):
        same(pair, "BITFIELD", "bf", "GET", "u8", off)
        same(pair, "BITFIELD", "bf", "SET", "i64", off, "1")
        same(pair, "BITFIELD_RO", "bf", "GET", "i32", off)
    same(pair, "SETBIT", "bf", "4294967296", "1")
    same(pair, "EXISTS", "bf")
    for c in pair:
        assert_alive(c)


# --------------------------------------------------------------- found here



def with_delivery_time(dump, entry_id, t):
    """A DUMP payload of a stream whose pending entry entry_id (ms, seq) has
    its delivery time replaced by t, CRC recomputed."""
    body = dump[:-8]
    raw = struct.pack(">QQ", *entry_id)
    now = int(time.time() * 1000)
    pos = 0
    while True:
        pos = body.index(raw, pos)
        if pos + 24 <= len(body):
            dt = struct.unpack("<q", body[pos + 16:pos + 24])[0]
            if abs(dt - now) < 86400000:
                break
        pos += 1
    body = body[:pos + 16] + struct.pack("<q", t) + body[pos + 24:]
    return body + struct.pack("<Q", crc64(body))


def test_restore_stream_pending_entry_with_extreme_delivery_time(pair):
    """Ours (found here): a RESTORE payload whose pending entry was
    delivered at -2^63 + 1 ms was accepted, and XPENDING's idle time
    (now - delivery time) overflowed a signed subtraction.  Both servers
    are given the same payload under sanitize-dump-payload yes; replies
    must match, and ours must compute idle times without overflow."""
    for c in pair:
        c.call("XADD", "s", "1-1", "f", "v")
        c.call("XGROUP", "CREATE", "s", "g", "0")
        c.call("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
        c.call("CONFIG", "SET", "sanitize-dump-payload", "yes")
    dump = pair[1].call("DUMP", "s")[1]
    try:
        for t in (-(1 << 63) + 1, -(1 << 63), (1 << 63) - 1):
            payload = with_delivery_time(dump, (1, 1), t)
            got = same(pair, "RESTORE", "s2", "0", payload, "REPLACE")
            # Redis 7.0.15 takes it, sanitized or not: so do we.
            assert got == b"OK"
            for c in pair:
                full = c.call("XINFO", "STREAM", "s2", "FULL")[1]
                group = full[full.index(b"groups") + 1][0]
                assert group[group.index(b"pending") + 1] == [[b"1-1", b"alice", t, 1]]
            # The idle time of an entry delivered at +-2^63: the same answer
            # (Redis clamps what its subtraction gives), and no overflow.
            same(pair, "XPENDING", "s2", "g", "-", "+", "10")
            same(pair, "XPENDING", "s2", "g", "IDLE", "1000", "-", "+", "10")
            same(pair, "XCLAIM", "s2", "g", "dave", "0", "1-1", "IDLE", "-9223372036854775808", "JUSTID")
            same(pair, "XCLAIM", "s2", "g", "dave", "0", "1-1", "IDLE", "9223372036854775807", "JUSTID")
            same(pair, "XCLAIM", "s2", "g", "bob", "3600000", "1-1", "JUSTID")
            same(pair, "XAUTOCLAIM", "s2", "g", "carol", "3600000", "0", "JUSTID")
            for c in pair:
                c.call("XINFO", "STREAM", "s2", "FULL")
    finally:
        for c in pair:
            c.call("CONFIG", "SET", "sanitize-dump-payload", "no")
    for c in pair:
        assert_alive(c)


def test_hincrbyfloat_overflowing_value(pair):
    """Ours (found here): HINCRBYFLOAT h f 1e400 stored a 255-digit string
    that read back as 1e+254.  Redis refuses values past a long double's
    range, and formats big finite ones its own way: replies must match."""
    for inc in ("1e400", "-1e400", "1e308", "1.5e4000", "1e4932", "1e-400"):
        same(pair, "HINCRBYFLOAT", "h", "f", inc)
        same(pair, "HGET", "h", "f")
        same(pair, "INCRBYFLOAT", "k", inc)
        same(pair, "GET", "k")
    for c in pair:
        c.call("HSET", "h", "g", "1e308")
        c.call("SET", "k2", "1e308")
    same(pair, "HINCRBYFLOAT", "h", "g", "1e308")
    same(pair, "HGET", "h", "g")
    same(pair, "INCRBYFLOAT", "k2", "1e308")
    same(pair, "GET", "k2")
    for c in pair:
        assert_alive(c)


# --------------------------------------------------------------- 2025-2026

CRLF_CASES = [
    ("FUNCTION", "LIST", "X\r\n+INJECTED"),
    ("EVAL", "error(redis.error_reply('X\\r\\n+INJECTED'))", "0"),
    ("EVAL", "return redis.status_reply('a\\r\\n+b')", "0"),
    ("EVAL", "return {err='a\\r\\n+b'}", "0"),
    ("EVAL", "error('a\\r\\n+b')", "0"),
    ("EVAL", "return redis.call('x\\r\\n+y')", "0"),
    ("foo\r\n+bar",),
    ("CONFIG", "SET", "a\r\n+b", "1"),
    ("CLIENT", "SETNAME", "a\r\nb"),
    ("CLIENT", "KILL", "a\r\n+b"),
    ("OBJECT", "x\r\n+y"),
    ("XADD", "s", "1-1\r\n+x", "f", "v"),
    ("HELLO", "3\r\n+x"),
    ("ACL", "SETUSER", "u", "x\r\n+y"),
    ("SCRIPT", "x\r\n+y"),
    ("FCALL", "x\r\n+y", "0"),
    ("COMMAND", "INFO", "x\r\n+y"),
    ("FUNCTION", "LOAD", "#!lua name=a\r\n+b\nredis.register_function('f', function() end)"),
]


def test_cve_2025_67733_crlf_never_reaches_the_protocol(pair):
    """CVE-2025-67733: error and status replies that echo a client's
    argument carried its CR/LF onto the wire, where a client read the rest
    as a reply of its own (protocol injection, a stuck connection).  Every
    such reply is one frame, the same bytes as Redis's, and the next
    request's reply is the next frame."""
    for cmd in CRLF_CASES:
        same(pair, *cmd)
        for c in pair:
            assert c.call("PING")[1] == b"PONG", cmd
    assert_alive(pair[0])


def forged_zipmap_payloads():
    return [
        # a one-byte field length stored in the five-byte form
        b"\x09\x11\x01\xfe\x04\x00\x00\x00\x01\x00\xff\x00\x04\x00\x76\x61\x6c\x31\xff"
        b"\x09\x00\xf9\xd5\xa4\xf7\x7d\x00\x3f\x1b",
        # the same for a value
        b"\x09\x0e\x01\x01\x6b\xfe\x04\x00\x00\x00\x00\x76\x61\x6c\x31\xff\x09\x00\xd0\xf9\xe4\x1d\xe4\xfb\x11\x4c",
    ]


def test_cve_2026_25243_zipmap_forged_lengths(pair):
    """CVE-2026-25243: RESTORE of an old zipmap-encoded hash trusted a
    five-byte length given for a small item (and sizes that could not fit
    the listpack it became), reading out of bounds.  Such payloads are
    refused with `Bad data format`, with and without sanitize-dump-payload."""
    for payload in forged_zipmap_payloads():
        for mode in ("no", "yes"):
            same(pair, "CONFIG", "SET", "sanitize-dump-payload", mode)
            same(pair, "DEL", "h")
            assert "Bad data format" in err(same(pair, "RESTORE", "h", "0", payload))
            assert same(pair, "EXISTS", "h") == 0
    assert_alive(pair[0])


def with_crc(payload):
    body = payload[:-8]
    return body + struct.pack("<Q", crc64(body))


def test_cve_2026_66373_stream_nack_shared_by_two_consumers(pair):
    """CVE-2026-66373: a stream payload whose pending entry 1-0 sits in two
    consumers' lists was accepted; XACK by one freed the entry the other
    still pointed to (use after free).  Refused with `Bad data format`."""
    payload = with_crc(
        b"\x0f\x01\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x25\x25\x00\x00\x00\x0a"
        b"\x00\x01\x01\x00\x01\x01\x01\x85\x66\x69\x65\x6c\x64\x06\x00\x01\x02\x01\x00\x01\x00\x01\x85\x76\x61"
        b"\x6c\x75\x65\x06\x04\x01\xff\x01\x01\x00\x01\x07\x6d\x79\x67\x72\x6f\x75\x70\x01\x00\x01\x00\x00\x00"
        b"\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x4a\x79\x89\x8f\x9f\x01\x00\x00\x01\x02\x09\x63"
        b"\x6f\x6e\x73\x75\x6d\x65\x72\x41\x4a\x79\x89\x8f\x9f\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01"
        b"\x00\x00\x00\x00\x00\x00\x00\x00\x09\x63\x6f\x6e\x73\x75\x6d\x65\x72\x42\x54\x79\x89\x8f\x9f\x01\x00"
        b"\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x09\x00\xf6\xea\x7b\x6c\xb8"
        b"\xb8\xd8\xb4")
    for mode in ("no", "yes"):
        same(pair, "CONFIG", "SET", "sanitize-dump-payload", mode)
        assert "Bad data format" in err(same(pair, "RESTORE", "mystream", "0", payload))
        same(pair, "XACK", "mystream", "mygroup", "1-0")
        same(pair, "DEL", "mystream")
    assert_alive(pair[0])


@pytest.mark.slow
def test_cve_2026_23631_full_sync_waits_for_a_busy_script(start_server):
    """CVE-2026-23631: a replica running a script past busy-reply-threshold
    went on with a full sync from its master, whose load frees the Lua
    engine under the running script (use after free).  Here the master is
    replaced (a new replication ID: only a full sync can follow) while the
    replica's script runs; the replica must keep the script's engine until
    it ends, then sync and serve."""
    from rawresp import RawConn
    master = start_server()
    replica = start_server(args=("--busy-reply-threshold", "10", "--repl-diskless-load", "swapdb"))
    m, r = master.client(), replica.client()
    r.replicaof("127.0.0.1", master.port)
    deadline = time.time() + 20
    while r.info("replication").get("master_link_status") != "up":
        assert time.time() < deadline, "replica never synced"
        time.sleep(0.05)
    busy = RawConn(replica.port, timeout=30)
    busy.send("EVAL_RO", "while true do end", "0")
    deadline = time.time() + 10
    while True:
        try:
            r.ping()
        except Exception as e:
            assert "BUSY" in str(e)
            break
        assert time.time() < deadline, "the script never turned busy"
        time.sleep(0.02)
    port = master.port
    master.stop()
    master = start_server(port=port)
    m = master.client()
    big = "x" * 100000
    for i in range(5):
        m.set("big:%d" % i, big)
    time.sleep(2)  # time enough for a reconnect and a full sync, were they served
    with pytest.raises(Exception) as e:
        r.ping()
    assert "BUSY" in str(e.value)  # the script still runs, its engine intact
    r.execute_command("SCRIPT", "KILL")
    assert "killed" in str(busy.read())
    deadline = time.time() + 30
    while not (r.info("replication").get("master_link_status") == "up" and r.dbsize() == 5):
        assert time.time() < deadline, "the replica never synced with the new master"
        time.sleep(0.1)
    assert m.info("stats")["sync_full"] == 1
    assert r.get("big:4") == big
    assert r.eval("return 1", 0) == 1  # the engine the sync reset works
    busy.close()
