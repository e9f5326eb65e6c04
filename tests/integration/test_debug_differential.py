"""DEBUG DIGEST, DIGEST-VALUE, PROTOCOL and LOG, against Debian's
redis-server 7.0.15: the same data must give the same fingerprint, whatever
the encodings (small and large values of every type, integers, a TTL,
several databases), and each PROTOCOL type the same bytes in RESP2 and
RESP3.  Redis's own test suite compares a master with its replicas by
DEBUG DIGEST, so a replica of ours must match its master too."""
import pytest

from conftest import REDIS_SERVER
from rawresp import ExactConn
from repl_helpers import wait_caught_up, wait_link_up

pytestmark = pytest.mark.differential

DEBUG_ON = ["--enable-debug-command", "yes"]

# Each value in a small form (listpack, intset, embedded) and a large one.
DATA = [
    ["SET", "s:text", "hello"], ["SET", "s:int", "12345"], ["SET", "s:big", "x" * 5000],
    ["SET", "s:neg", "-7"], ["PEXPIRE", "s:text", "100000"],
    ["RPUSH", "l:small", "a", "b", "1", "2", "c"],
    ["RPUSH", "l:big"] + [str(i) * (i % 7 + 1) for i in range(3000)],
    ["SADD", "set:ints", "1", "2", "3", "-5"], ["SADD", "set:small", "a", "b", "c"],
    ["SADD", "set:bigints"] + [str(i) for i in range(1000)],
    ["SADD", "set:big"] + ["m%d" % i for i in range(500)],
    ["ZADD", "z:small", "1", "a", "2.5", "b", "3", "c", "-inf", "d", "1e-300", "tiny"],
    ["ZADD", "z:big"] + sum([[repr(i * 0.1), "m%d" % i] for i in range(500)], []),
    ["ZADD", "z:intmembers", "1", "7", "2", "8"],
    ["HSET", "h:small", "f1", "v1", "f2", "2"],
    ["HSET", "h:big"] + sum([["f%d" % i, str(i)] for i in range(1000)], []),
    ["XADD", "x", "1-1", "a", "1", "b", "2"], ["XADD", "x", "5-0", "c", "3"],
    ["XGROUP", "CREATE", "x", "g", "0"],
    ["PFADD", "hll", "a", "b", "c"], ["SETBIT", "bits", "100", "1"],
    ["SELECT", "3"], ["SET", "other-db", "v"], ["SELECT", "0"],
]
KEYS = ["s:text", "s:int", "s:big", "s:neg", "l:small", "l:big", "set:ints", "set:small", "set:bigints",
        "set:big", "z:small", "z:big", "z:intmembers", "h:small", "h:big", "x", "hll", "bits", "missing"]


def load(port):
    c = ExactConn(port)
    for cmd in DATA:
        c.call(*cmd)
    return c


def test_digest_matches_redis(start_server):
    ours = start_server(args=DEBUG_ON)
    ref = start_server(args=DEBUG_ON, binary=REDIS_SERVER)
    a, b = ExactConn(ours.port), ExactConn(ref.port)
    assert a.call("DEBUG", "DIGEST") == b.call("DEBUG", "DIGEST") == (b"+" + b"0" * 40 + b"\r\n", b"0" * 40)
    a, b = load(ours.port), load(ref.port)
    digest = a.call("DEBUG", "DIGEST")
    assert digest == b.call("DEBUG", "DIGEST")
    assert digest[1] != b"0" * 40
    for k in KEYS:
        assert a.call("DEBUG", "DIGEST-VALUE", k) == b.call("DEBUG", "DIGEST-VALUE", k), k
    assert a.call("DEBUG", "DIGEST-VALUE", "s:int", "missing", "h:small") == \
        b.call("DEBUG", "DIGEST-VALUE", "s:int", "missing", "h:small")
    # Order counts for lists, not for sets; a TTL counts; the db counts.
    for conn in (a, b):
        conn.call("RPUSH", "l:small", "z")
        conn.call("SREM", "set:small", "a")
        conn.call("SADD", "set:small", "a")
        conn.call("PERSIST", "s:text")
    after = a.call("DEBUG", "DIGEST")
    assert after == b.call("DEBUG", "DIGEST")
    assert after != digest
    assert a.call("SWAPDB", "0", "5") == b.call("SWAPDB", "0", "5")
    assert a.call("DEBUG", "DIGEST") == b.call("DEBUG", "DIGEST") != after


def test_digest_survives_reload_and_encoding_changes(start_server, tmp_path):
    """The fingerprint is of the data, not of its layout: the same after
    DEBUG RELOAD and after a listpack grows into a hashtable and back."""
    s = start_server(args=DEBUG_ON + ["--dir", str(tmp_path)])
    c = load(s.port)
    before = c.call("DEBUG", "DIGEST")
    assert c.call("DEBUG", "RELOAD")[1] == b"OK"
    assert c.call("DEBUG", "DIGEST") == before
    c.call("HSET", "h:small", "long", "y" * 200)      # converts it
    c.call("HDEL", "h:small", "long")
    assert c.call("DEBUG", "DIGEST") == before


def test_replica_digest_equals_masters(start_server):
    m = start_server(args=DEBUG_ON)
    s = start_server(args=DEBUG_ON)
    load(m.port)
    mc, sc = m.client(), s.client()
    sc.replicaof("127.0.0.1", m.port)
    wait_link_up(sc)
    for i in range(200):
        mc.incrbyfloat("fl", 0.1)
        mc.spop("set:big")
        mc.lmpop(2, "nolist", "l:big", direction="LEFT", count=3)
        mc.pfcount("hll")
    wait_caught_up(mc, sc)
    assert mc.execute_command("DEBUG", "DIGEST") == sc.execute_command("DEBUG", "DIGEST")


PROTOCOL_TYPES = ["string", "integer", "double", "bignum", "null", "array", "set", "map", "attrib", "push",
                  "verbatim", "true", "false", "nosuchtype"]


@pytest.mark.parametrize("resp", [2, 3])
def test_debug_protocol_bytes_match_redis(start_server, resp):
    ours = start_server(args=DEBUG_ON)
    ref = start_server(args=DEBUG_ON, binary=REDIS_SERVER)
    conns = [ExactConn(ours.port), ExactConn(ref.port)]
    if resp == 3:
        assert conns[0].call("HELLO", "3")[0][:1] == conns[1].call("HELLO", "3")[0][:1] == b"%"
    for t in PROTOCOL_TYPES:
        got = []
        for conn in conns:
            conn.send("DEBUG", "PROTOCOL", t)
            raw = conn.read_exact()[0]
            if t in ("attrib", "push") and resp == 3:
                raw += conn.read_exact()[0]       # the reply after the attribute or the push
            got.append(raw)
        assert got[0] == got[1], t
        # The connection is still in step: the next reply is the PING's.
        assert conns[0].call("PING") == conns[1].call("PING")


def test_debug_log_writes_the_line(start_server):
    s = start_server(args=DEBUG_ON)
    assert s.client().execute_command("DEBUG", "LOG", "marker 1234") == "OK"
    assert "DEBUG LOG: marker 1234" in s.read_log()


def test_debug_help_lists_the_new_subcommands(start_server):
    s = start_server(args=DEBUG_ON)
    text = "\n".join(s.client().execute_command("DEBUG", "HELP"))
    for sub in ("DIGEST", "DIGEST-VALUE", "PROTOCOL", "LOG"):
        assert "\n" + sub in "\n" + text, sub
