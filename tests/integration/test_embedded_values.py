"""Short string values embedded in the key's entry (src/db_entry.h, issue
20): integers and strings of up to 44 bytes are copied into the one
allocation that holds the key, so every command that reads, replaces,
moves or re-types such a value must behave as before.

Each sequence runs on our server and on Redis 7.0.15 side by side, and the
replies (values, OBJECT ENCODING int/embstr/raw, TTLs, OBJECT REFCOUNT)
must match; then MEMORY USAGE must show the saving (one allocation: no
separate value object) and RESTORE must keep its IDLETIME stamp on an
embedded copy.
"""
import pytest

from diffreply import run_script


SEQUENCES = {
    "set_and_encodings": [
        ("SET", "a", "xxx"), ("OBJECT", "ENCODING", "a"), ("GET", "a"),
        ("SET", "i", "123456789"), ("OBJECT", "ENCODING", "i"), ("GET", "i"),
        ("SET", "s", "7"), ("OBJECT", "ENCODING", "s"),
        ("SET", "e44", "e" * 44), ("OBJECT", "ENCODING", "e44"),
        ("SET", "r45", "r" * 45), ("OBJECT", "ENCODING", "r45"),
        ("SET", "neg", "-99999999999"), ("OBJECT", "ENCODING", "neg"),
        ("SET", "empty", ""), ("OBJECT", "ENCODING", "empty"), ("STRLEN", "empty"),
        ("OBJECT", "REFCOUNT", "a"), ("OBJECT", "REFCOUNT", "i"),
        ("SET", "a", "y" * 30), ("GET", "a"), ("OBJECT", "ENCODING", "a"),
        ("SET", "a", "z" * 200), ("GET", "a"), ("OBJECT", "ENCODING", "a"),
        ("SET", "a", "short"), ("GET", "a"), ("OBJECT", "ENCODING", "a"),
    ],
    "in_place_changes": [
        ("SET", "n", "100000"), ("INCR", "n"), ("INCRBY", "n", "5"), ("DECR", "n"),
        ("GET", "n"), ("OBJECT", "ENCODING", "n"),
        ("INCRBYFLOAT", "n", "0.5"), ("GET", "n"), ("OBJECT", "ENCODING", "n"),
        ("SET", "t", "abc"), ("APPEND", "t", "def"), ("GET", "t"), ("OBJECT", "ENCODING", "t"),
        ("SET", "u", "hello"), ("SETRANGE", "u", "1", "EY"), ("GET", "u"), ("OBJECT", "ENCODING", "u"),
        ("SET", "b", "ab"), ("SETBIT", "b", "3", "1"), ("GET", "b"), ("OBJECT", "ENCODING", "b"),
        ("SET", "g", "old"), ("GETSET", "g", "new"), ("GET", "g"),
        ("SET", "g", "newer", "GET"), ("GETDEL", "g"), ("EXISTS", "g"),
        ("SET", "h", "12"), ("PFADD", "h", "x"),
    ],
    "ttl_moves_the_entry": [
        ("SET", "k", "v1"), ("EXPIRE", "k", "1000"), ("GET", "k"), ("TTL", "k"),
        ("OBJECT", "ENCODING", "k"), ("SET", "k", "v2", "KEEPTTL"), ("TTL", "k"), ("GET", "k"),
        ("PERSIST", "k"), ("TTL", "k"), ("GETEX", "k", "EX", "500"), ("TTL", "k"),
        ("SET", "k", "42", "EX", "300"), ("GET", "k"), ("TTL", "k"), ("OBJECT", "ENCODING", "k"),
        ("INCR", "k"), ("TTL", "k"), ("SETEX", "m", "100", "mv"), ("GET", "m"), ("TTL", "m"),
        ("GETEX", "m", "PERSIST"), ("TTL", "m"), ("GET", "m"),
    ],
    "rename_move_copy": [
        ("SET", "src", "short-value"), ("EXPIRE", "src", "900"),
        ("RENAME", "src", "dst"), ("GET", "dst"), ("TTL", "dst"), ("EXISTS", "src"),
        ("OBJECT", "ENCODING", "dst"),
        ("SET", "other", "999999"), ("RENAME", "other", "dst"), ("GET", "dst"), ("OBJECT", "ENCODING", "dst"),
        ("RENAMENX", "dst", "dst2"), ("GET", "dst2"),
        ("COPY", "dst2", "cp"), ("GET", "cp"), ("OBJECT", "ENCODING", "cp"),
        ("SET", "mv", "moving"), ("EXPIRE", "mv", "800"), ("MOVE", "mv", "1"), ("EXISTS", "mv"),
        ("SELECT", "1"), ("GET", "mv"), ("TTL", "mv"), ("OBJECT", "ENCODING", "mv"),
        ("MOVE", "mv", "0"), ("SELECT", "0"), ("GET", "mv"),
        ("SET", "x1", "a"), ("SET", "x2", "b"), ("SWAPDB", "0", "1"), ("SELECT", "1"),
        ("MGET", "x1", "x2"), ("SELECT", "0"), ("SWAPDB", "0", "1"),
        ("MSET", "m1", "1", "m2", "two", "m3", "x" * 60), ("MGET", "m1", "m2", "m3"),
        ("OBJECT", "ENCODING", "m1"), ("OBJECT", "ENCODING", "m2"), ("OBJECT", "ENCODING", "m3"),
        ("LPUSH", "x1", "z"), ("TYPE", "x1"), ("DEL", "x1", "x2"), ("LPUSH", "x1", "z"), ("TYPE", "x1"),
    ],
}


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_same_replies_as_redis(server, redis_ref, name):
    ours, ref = server.client(), redis_ref.client()
    ours.flushall()
    ref.flushall()
    got, want = run_script(ours, SEQUENCES[name]), run_script(ref, SEQUENCES[name])
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, (SEQUENCES[name][i], g, w)
    ours.flushall()
    ref.flushall()


def test_memory_usage_counts_one_allocation(r):
    r.set("key:000000000001", "xxx")
    r.set("key:000000000002", "x" * 100)
    short, long_ = r.memory_usage("key:000000000001"), r.memory_usage("key:000000000002")
    # 4 (flags, LRU) + 18 (key) + 5 (value) = 27 bytes in one block (32
    # with ebbmalloc or jemalloc, 40 with glibc's malloc); the 100-byte
    # value is embedded too: 4 + 18 + 104 = 126 bytes, no robj, no second
    # block (128 with ebbmalloc).
    assert 27 <= short <= 40, short
    assert 126 <= long_ <= 144, long_


def test_restore_keeps_idle_time_of_an_embedded_value(r):
    r.set("k", "abc")
    payload = r.dump("k")
    r.delete("k")
    r.restore("k", 0, payload, idletime=1000)
    assert 1000 <= r.object("idletime", "k") <= 1010  # before GET, which touches
    assert r.object("encoding", "k") == "embstr"
    assert r.get("k") == "abc"
    r.restore("t", 100000, payload, idletime=500)     # the TTL moves the entry
    assert 500 <= r.object("idletime", "t") <= 510
    assert r.get("t") == "abc" and 0 < r.pttl("t") <= 100000


def test_lfu_counter_survives_overwrite(start_server):
    s = start_server(args=("--maxmemory-policy", "allkeys-lfu"))
    c = s.client()
    c.set("hot", "1" * 20)
    for _ in range(300):
        c.get("hot")
    before = c.object("freq", "hot")
    assert before > 5
    c.set("hot", "2" * 20)       # a new embedded value takes the counter over
    c.expire("hot", 1000)         # the entry moves to gain its expire slot
    assert c.object("freq", "hot") >= before - 1
    assert c.get("hot") == "2" * 20
