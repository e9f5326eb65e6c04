"""Listpack and intset blobs in RDB files: what we write is what Redis 7.0
writes for its compact encodings, and the loader takes such blobs as they
are when they pass its checks (layout, canonical integers, the config's
limits; for files without a verified checksum also score order and
repeated members), else rebuilds or refuses them.

Differential: edge values (integer widths, back-length boundaries,
integer-looking strings, float scores) go through ours -> Redis -> ours.
Crafted: hand-made RDB files exercise the adopt / rebuild / refuse paths."""
import os
import struct

import pytest

from conftest import REDIS_SERVER
from persist_helpers import snapshot

# Strings that look like numbers but must stay strings, and numbers at the
# listpack's integer-encoding boundaries.
EDGE_VALUES = ["0", "-0", "007", " 1", "1 ", "+5", "1.5", "1e3", "127", "128", "-4096", "4095", "4096",
               "-4097", "32767", "32768", "-32769", "8388607", "8388608", "2147483647", "2147483648",
               "9223372036854775807", "-9223372036854775808", "9223372036854775808", "", "x",
               "a" * 63, "b" * 64, "c" * 4095, "d" * 4096, "e" * 16377, "f" * 16378]
SCORES = [0.1, -0.0, 1e-300, 5e-324, 1.7976931348623157e308, float("inf"), float("-inf"), 3, -2.5,
          123.456, 1 / 3, 2 ** 53, 2 ** 53 + 2, -(2 ** 60)]


def _fill_edges(r):
    r.rpush("elist", *EDGE_VALUES)
    small = [v for v in EDGE_VALUES if len(v) <= 64]
    r.rpush("slist", *small)
    r.hset("ehash", mapping={("f%d" % i): v for i, v in enumerate(small)})
    r.hset("ihash", mapping={v: "v" for v in small})           # integer-looking fields
    r.zadd("ezset", {"m%d" % i: s for i, s in enumerate(SCORES)})
    r.zadd("izset", {v: i for i, v in enumerate(small)})       # integer-looking members
    r.sadd("eintset", 0, -1, 2 ** 15, -(2 ** 31), 2 ** 62)


def _encodings(r, keys):
    return {k: r.object("encoding", k) for k in keys}


def test_edge_values_round_trip_through_redis(start_server):
    if not os.path.exists(REDIS_SERVER):
        pytest.fail("Debian's redis-server is required (utils/install-deps.sh installs it)")
    ours = start_server()
    r = ours.client()
    _fill_edges(r)
    expected = snapshot(r)
    keys = ["slist", "ehash", "ihash", "ezset", "izset", "eintset"]
    assert set(_encodings(r, keys).values()) == {"listpack", "intset"}
    assert r.save()
    ref = start_server(binary=REDIS_SERVER, args=("--dir", ours.dir))
    rr = ref.client()
    assert snapshot(rr) == expected
    assert rr.save()
    ref.stop()
    back = start_server(args=("--dir", ours.dir))
    rb = back.client()
    assert snapshot(rb) == expected
    assert _encodings(rb, keys) == _encodings(r, keys)
    assert rb.zscore("ezset", "m0") == 0.1
    assert rb.zrank("ezset", "m5") == 13 and rb.zrank("ezset", "m6") == 0 and rb.zrank("ezset", "m4") == 12


def test_small_types_are_written_as_blobs(start_server):
    s = start_server()
    r = s.client()
    r.hset("h", mapping={"f1": "v1", "f2": "v2"})
    r.zadd("z", {"a": 1.5, "b": 2})
    r.rpush("l", "x", "y")
    r.sadd("s", "p", "q")
    assert r.save()
    data = open(os.path.join(s.dir, "dump.rdb"), "rb").read()
    types = {}
    for key in (b"h", b"z", b"l", b"s"):
        i = data.index(bytes([len(key)]) + key)
        types[key] = data[i - 1]
    # hash listpack 16, zset listpack 17, quicklist 2 (18), and a plain set
    # (2): the listpack set type (20) is newer than Redis 7.0's version 10.
    assert types == {b"h": 16, b"z": 17, b"l": 18, b"s": 2}


# ------------------------------------------------------------- crafted files

def crc64(data):
    """Redis's CRC-64 (Jones polynomial, reflected)."""
    poly, crc = 0x95AC9329AC4BC9B5, 0
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table.append(c)
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def _backlen(n):
    size = 1 if n <= 127 else 2 if n < 16383 else 3
    out = []
    for i in range(size):
        out.append((n >> (7 * i)) & 0x7F | (0x80 if i > 0 else 0))
    return bytes(reversed(out))


def lp_entry(v, as_string=False):
    """One listpack entry; ints in the smallest encoding unless as_string."""
    if isinstance(v, int) and not as_string:
        if 0 <= v <= 127:
            body = bytes([v])
        elif -4096 <= v <= 4095:
            u = v & 0x1FFF
            body = bytes([0xC0 | (u >> 8), u & 0xFF])
        else:
            body = b"\xf4" + struct.pack("<q", v)
    else:
        s = str(v).encode() if not isinstance(v, bytes) else v
        assert len(s) < 64
        body = bytes([0x80 | len(s)]) + s
    return body + _backlen(len(body))


def listpack(entries):
    body = b"".join(entries)
    return struct.pack("<IH", 6 + len(body) + 1, len(entries)) + body + b"\xff"


def rdb_string(b):
    assert len(b) < 16384
    return (bytes([len(b)]) if len(b) < 64 else struct.pack(">H", 0x4000 | len(b))) + b


def rdb_file(keys, checksum=True):
    """keys: (type, name, payload bytes) in db 0; version 10."""
    out = b"REDIS0010" + b"\xfe\x00"
    for t, name, payload in keys:
        out += bytes([t]) + rdb_string(name) + payload
    out += b"\xff"
    return out + (struct.pack("<Q", crc64(out)) if checksum else b"\0" * 8)


def _start_on(start_server, tmp_path, data, args=()):
    d = tmp_path / "rdb"
    d.mkdir(exist_ok=True)
    (d / "dump.rdb").write_bytes(data)
    return start_server(args=("--dir", str(d)) + tuple(args))


def test_crc64_matches_redis():
    assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA


def test_adopted_and_rebuilt_blobs(start_server, tmp_path):
    zset_unordered = listpack([lp_entry("b"), lp_entry(2), lp_entry("a"), lp_entry(1)])
    hash_string_int = listpack([lp_entry(5, as_string=True), lp_entry("five"), lp_entry("f"), lp_entry(-7)])
    # QUICKLIST_2: two nodes, each "packed" (2) and a listpack.
    list_nodes = (b"\x02" + b"\x02" + rdb_string(listpack([lp_entry("x"), lp_entry(1)])) +
                  b"\x02" + rdb_string(listpack([lp_entry(300), lp_entry("y")])))
    data = rdb_file([(17, b"z", rdb_string(zset_unordered)),
                     (16, b"h", rdb_string(hash_string_int)),
                     (18, b"l", list_nodes)], checksum=False)
    s = _start_on(start_server, tmp_path, data)
    r = s.client()
    # No checksum vouches for the file: the unordered zset is rebuilt in order.
    assert r.zrange("z", 0, -1, withscores=True) == [("a", 1.0), ("b", 2.0)]
    assert r.object("encoding", "z") == "listpack"
    # "5" stored as a string entry is re-encoded so lookups by 5 find it.
    assert r.hget("h", "5") == "five" and r.hget("h", "f") == "-7" and r.hlen("h") == 2
    assert r.lrange("l", 0, -1) == ["x", "1", "300", "y"]
    r.hset("h", "5", "again")
    assert r.hlen("h") == 2


def test_blob_over_the_config_limits_is_converted(start_server, tmp_path):
    entries = []
    for i in range(6):
        entries += [lp_entry("f%d" % i), lp_entry(i)]
    data = rdb_file([(16, b"h", rdb_string(listpack(entries)))])
    s = _start_on(start_server, tmp_path, data, args=("--hash-max-listpack-entries", "4"))
    r = s.client()
    assert r.object("encoding", "h") == "hashtable"
    assert r.hgetall("h") == {"f%d" % i: str(i) for i in range(6)}


@pytest.mark.parametrize("case", ["dup-member", "bad-backlen", "odd-zset", "nan-score"])
def test_bad_blobs_refused(start_server, tmp_path, case):
    if case == "dup-member":
        payload, key_type = listpack([lp_entry("a"), lp_entry(1), lp_entry("a"), lp_entry(2)]), 17
        expect = "Duplicate zset members"
    elif case == "bad-backlen":
        lp = bytearray(listpack([lp_entry("abc"), lp_entry("de")]))
        lp[6 + 4] = 0x09                     # first entry's back-length: 4 -> 9
        payload, key_type, expect = bytes(lp), 16, "Corrupt listpack blob"
    elif case == "odd-zset":
        payload, key_type = listpack([lp_entry("a"), lp_entry(1), lp_entry("b")]), 17
        expect = "Odd number of entries"
    else:
        payload, key_type = listpack([lp_entry("a"), lp_entry("nan")]), 17
        expect = "Invalid score"
    data = rdb_file([(key_type, b"k", rdb_string(payload))], checksum=False)
    with pytest.raises(RuntimeError) as e:
        _start_on(start_server, tmp_path, data)
    assert expect in str(e.value)


def test_sanitize_dump_payload_checks_checksummed_files(start_server, tmp_path):
    """With a matching CRC the loader trusts blob contents, as Redis does by
    default; sanitize-dump-payload yes checks them anyway."""
    unordered = listpack([lp_entry("b"), lp_entry(2), lp_entry("a"), lp_entry(1)])
    dup = listpack([lp_entry("a"), lp_entry(1), lp_entry("a"), lp_entry(2)])
    s = _start_on(start_server, tmp_path, rdb_file([(17, b"z", rdb_string(unordered))]),
                  args=("--sanitize-dump-payload", "yes"))
    r = s.client()
    assert r.config_get("sanitize-dump-payload") == {"sanitize-dump-payload": "yes"}
    assert r.zrange("z", 0, -1) == ["a", "b"]
    s.stop()
    with pytest.raises(RuntimeError) as e:
        _start_on(start_server, tmp_path, rdb_file([(17, b"k", rdb_string(dup))]),
                  args=("--sanitize-dump-payload", "yes"))
    assert "Duplicate zset members" in str(e.value)
    trusting = _start_on(start_server, tmp_path, rdb_file([(17, b"k", rdb_string(dup))]))
    assert trusting.client().config_get("sanitize-dump-payload") == {"sanitize-dump-payload": "no"}
    assert trusting.client().exists("k") == 1
