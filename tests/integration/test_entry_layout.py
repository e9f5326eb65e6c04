"""Values embedded in their key's entry without a robj (src/db_entry.h,
src/db_views.h, issue 20 step 4): strings of up to OBJ_EMBED_MAX (4096)
bytes and unshared integers live in the key's one allocation behind a
4-byte header, and lookups hand commands a robj view of them that lasts
until the end of the command.

Checked here:
- every string length class from 0 bytes to 1 MiB (sds header sizes 1, 3,
  5 and 9; embstr/raw at 44/45; embedded/raw at 4096/4097) round-trips
  through SET/GET/STRLEN/GETRANGE/APPEND/SETRANGE, OBJECT ENCODING, DUMP +
  RESTORE and DEBUG RELOAD, with the same replies as Redis 7.0.15;
- commands that hold many views at once (MGET over several view blocks, a
  script's loop, EXEC, SORT BY/GET, BITOP, LCS) read the right bytes;
- MEMORY USAGE of each layout: embedded short, embedded 100 bytes,
  embedded integer, shared integer, raw (over 4096, or edited in place),
  and the 8 bytes a TTL adds.
"""
import pytest

from diffreply import run_script

LENGTHS = [0, 1, 3, 20, 31, 32, 44, 45, 100, 126, 127, 128, 255, 256, 1000,
           4095, 4096, 4097, 65535, 65536, 1 << 20]


def value(n, salt=0):
    """n bytes with every byte value showing up, NULs included."""
    return bytes((i * 7 + salt) % 256 for i in range(n))


def bclient(s):
    return s.client(decode_responses=False, socket_timeout=60)


def string_script(n):
    k, v = f"s{n}", value(n)
    mid = n // 2
    return [
        ("SET", k, v), ("GET", k), ("STRLEN", k), ("OBJECT", "ENCODING", k),
        ("GETRANGE", k, 1, 5), ("GETRANGE", k, -3, -1), ("GETRANGE", k, mid, mid + 40),
        ("SET", k + "a", v), ("APPEND", k + "a", b"tail"), ("GET", k + "a"),
        ("OBJECT", "ENCODING", k + "a"),
        ("SET", k + "r", v), ("SETRANGE", k + "r", mid, b"XYZ"), ("GET", k + "r"),
        ("STRLEN", k + "r"), ("OBJECT", "ENCODING", k + "r"),
        ("SET", k + "t", v, "EX", 1000), ("GET", k + "t"), ("TTL", k + "t"),
        ("RENAME", k + "t", k + "u"), ("GET", k + "u"), ("TTL", k + "u"),
        ("GETDEL", k + "u"), ("EXISTS", k + "u"),
    ]


@pytest.mark.parametrize("n", LENGTHS)
def test_length_class_same_as_redis(server, redis_ref, n):
    ours, ref = bclient(server), bclient(redis_ref)
    ours.flushall()
    ref.flushall()
    script = string_script(n)
    got, want = run_script(ours, script), run_script(ref, script)
    for cmd, g, w in zip(script, got, want):
        assert g == w, (cmd[:2], n, str(g)[:80], str(w)[:80])


def test_length_classes_survive_dump_restore_and_reload(server):
    c = bclient(server)
    c.flushall()
    for n in LENGTHS:
        c.set(f"k{n}", value(n, 3))
        c.set(f"t{n}", value(n, 5), ex=5000)
    c.set("int", 123456789)
    c.set("neg", -42)
    c.set("big", 9223372036854775807)
    for n in LENGTHS:
        payload = c.dump(f"k{n}")
        c.restore(f"d{n}", 0, payload)
        assert c.get(f"d{n}") == value(n, 3)
    enc = {n: c.object("encoding", f"k{n}") for n in LENGTHS}
    assert c.execute_command("DEBUG", "RELOAD") in (True, b"OK")
    for n in LENGTHS:
        assert c.get(f"k{n}") == value(n, 3), n
        assert c.get(f"d{n}") == value(n, 3), n
        assert c.get(f"t{n}") == value(n, 5), n
        assert 0 < c.ttl(f"t{n}") <= 5000
        assert c.object("encoding", f"k{n}") == enc[n]
        assert enc[n] == (b"embstr" if n <= 44 else b"raw")
    assert c.get("int") == b"123456789" and c.object("encoding", "int") == b"int"
    assert c.incrby("neg", 2) == -40
    assert c.get("big") == b"9223372036854775807"


def test_many_views_in_one_command(r):
    n = 1200  # several blocks of 256 views
    r.mset({f"m:{i}": f"v{i}" * (1 + i % 7) for i in range(n)})
    r.mset({f"n:{i}": str(100000 + i) for i in range(n)})  # embedded integers
    keys = [f"m:{i}" for i in range(n)] + [f"n:{i}" for i in range(n)]
    got = r.mget(keys)
    assert got == [f"v{i}" * (1 + i % 7) for i in range(n)] + [str(100000 + i) for i in range(n)]
    # a script's loop takes one view per GET, all alive until it ends
    script = """
        local t = {}
        for i = 0, tonumber(ARGV[1]) - 1 do t[#t + 1] = redis.call('GET', 'm:' .. i) end
        local again = redis.call('GET', 'm:0')
        return {#t, t[1], t[#t], again}
    """
    assert r.eval(script, 0, n) == [n, "v0", f"v{n - 1}" * (1 + (n - 1) % 7), "v0"]
    p = r.pipeline(transaction=True)
    for i in range(0, n, 3):
        p.get(f"m:{i}")
        p.incr(f"n:{i}")
    res = p.execute()
    assert res[0::2] == [f"v{i}" * (1 + i % 7) for i in range(0, n, 3)]
    assert res[1::2] == [100000 + i + 1 for i in range(0, n, 3)]


def test_multi_key_string_commands_same_as_redis(server, redis_ref):
    script = [
        ("MSET", "a", "abcdefgh" * 13, "b", "abXdefgh" * 13, "c", "\x0f\xf0", "d", "12"),
        ("LCS", "a", "b"), ("LCS", "a", "b", "LEN"),
        ("BITOP", "AND", "dst", "a", "b", "c"), ("GET", "dst"), ("OBJECT", "ENCODING", "dst"),
        ("BITOP", "XOR", "dst", "a", "b"), ("GET", "dst"),
        ("RPUSH", "l", "3", "1", "2"), ("MSET", "w_1", "30", "w_2", "10", "w_3", "20"),
        ("MSET", "o_1", "one" * 20, "o_2", "two", "o_3", "x" * 300),
        ("SORT", "l", "BY", "w_*", "GET", "o_*", "GET", "#"),
        ("SORT", "l", "BY", "w_*", "GET", "o_*", "STORE", "sorted"), ("LRANGE", "sorted", "0", "-1"),
        ("PFADD", "h", "x", "y"), ("COPY", "h", "h2"), ("PFCOUNT", "h", "h2"),
        ("SET", "f", "3.5"), ("INCRBYFLOAT", "f", "1.25"), ("GET", "f"), ("OBJECT", "ENCODING", "f"),
    ]
    ours, ref = server.client(), redis_ref.client()
    ours.flushall()
    ref.flushall()
    got, want = run_script(ours, script), run_script(ref, script)
    for cmd, g, w in zip(script, got, want):
        assert g == w, (cmd[:2], g, w)


def test_memory_usage_of_each_layout(r):
    k = "key:%012d"
    r.set(k % 1, "xxx")                   # 4 + 18 + 5 = 27
    r.set(k % 2, "x" * 100)               # 4 + 18 + 104 = 126
    r.set(k % 3, "123456789")             # 4 + 18 + 8 = 30
    r.set(k % 4, "x" * 5000)              # raw: entry + robj + sds
    r.set(k % 5, "xx")
    r.append(k % 5, "x")                  # edited in place: raw behind a pointer
    r.set(k % 6, "xxx", ex=1000)          # + 8
    r.set(k % 7, "x" * 4096)              # the longest embedded string
    r.set(k % 8, "x" * 4097)
    m = {i: r.memory_usage(k % i) for i in range(1, 9)}
    assert 27 <= m[1] <= 40, m
    assert 126 <= m[2] <= 144, m
    assert 30 <= m[3] <= 40, m
    assert m[4] >= 5000 + 16 + 27, m
    assert m[5] >= 27 + 16 + 4 and m[5] > m[1], m   # its own robj and sds
    assert 35 <= m[6] <= 48 and m[6] >= m[1], m  # glibc rounds 27 and 35 both to 40
    assert 4096 + 25 <= m[7] < m[8], m             # one block against three
    assert m[8] >= 4097 + 16 + 27, m
    assert r.object("encoding", k % 5) == "raw" and r.get(k % 5) == "xxx"
    assert r.object("encoding", k % 7) == "raw" and r.strlen(k % 7) == 4096


def test_lru_stamp_lives_in_the_entry(start_server):
    s = start_server(args=("--maxmemory-policy", "allkeys-lfu"))
    c = s.client()
    c.set("e", "abc")                 # embedded string
    c.set("i", "1234567")             # embedded integer
    c.set("p", "x" * 5000)            # pointer layout
    for _ in range(300):
        c.get("e")
        c.get("i")
        c.get("p")
    for key in ("e", "i", "p"):
        assert c.object("freq", key) > 5, key  # each lookup's stamp reached the entry
    assert c.object("freq", "e") == c.object("freq", "e")  # OBJECT does not touch


def test_overwrite_in_place_keeps_the_rest(r):
    """A value of the same stored size is written over the old one inside
    the entry (db_entry.c replace_in_place): TTL, neighbours and other
    sizes must not notice."""
    r.set("k", "abc", ex=1000)
    r.set("k2", "abc")
    before = r.memory_usage("k")
    r.set("k", "xyz", keepttl=True)
    assert r.get("k") == "xyz" and 0 < r.ttl("k") <= 1000 and r.get("k2") == "abc"
    assert r.memory_usage("k") == before
    r.set("k", "abcd", keepttl=True)
    r.set("k", "ab", keepttl=True)
    assert r.get("k") == "ab" and 0 < r.ttl("k") <= 1000
    r.set("n", 100000)
    for _ in range(500):
        r.incr("n")
    assert r.get("n") == "100500" and r.object("encoding", "n") == "int"
    r.set("n", "100501x")  # int -> string of another kind
    assert r.get("n") == "100501x" and r.object("encoding", "n") == "embstr"
    assert r.eval("local old = redis.call('GET', KEYS[1]); redis.call('SET', KEYS[1], 'zzz'); "
                  "return {old, redis.call('GET', KEYS[1])}", 1, "k2") == ["abc", "zzz"]
