"""Helpers shared by the persistence tests (test_rdb*.py, test_aof.py):
fill a server with every type in small and large encodings, snapshot its
contents without DUMP, wait for INFO fields."""
import time


def populate(r, prefix=""):
    """Every type, small (compact encodings) and large, plus TTLs, in db 0
    and a few keys in db 5."""
    p = prefix
    r.set(p + "str", "hello")
    r.set(p + "int", "12345")
    r.set(p + "bigint", "9223372036854775807")
    r.set(p + "neg", "-70000")
    r.set(p + "long", "abc" * 200)          # LZF-compressible
    r.set(p + "bin", bytes(range(256)).decode("latin-1"))
    r.rpush(p + "list", *[str(i) for i in range(10)], "x", "-3")
    r.rpush(p + "biglist", *["item-%d" % i for i in range(3000)])
    # Large elements: 32-bit string headers and multi-byte back-lengths in
    # Redis's listpacks (16378 + 5 = 16383 bytes sits on a boundary).
    r.rpush(p + "bigelems", "a" * 70000, "b" * 16378, "c" * 5000, "d" * 126, "e" * 16377)
    r.sadd(p + "intset", 1, 2, 3, -70000, 2 ** 40)
    r.sadd(p + "set", "a", "b", "c")
    r.sadd(p + "bigset", *["m%d" % i for i in range(1000)])
    r.sadd(p + "bigintset", *range(700))
    r.zadd(p + "zset", {"a": 1.5, "b": -2, "c": 1e100, "d": 3})
    r.zadd(p + "bigzset", {"m%d" % i: i / 3 for i in range(600)})
    r.hset(p + "hash", mapping={"f1": "v1", "f2": "2"})
    r.hset(p + "bighash", mapping={"f%d" % i: "v" * (i % 100) for i in range(400)})
    r.hset(p + "longhash", mapping={"f": "z" * 300})
    r.set(p + "ttl", "v", px=200000)
    r.rpush(p + "ttllist", "a", "b")
    r.pexpire(p + "ttllist", 300000)
    r.execute_command("SELECT", 5)
    r.set(p + "db5", "five")
    r.zadd(p + "db5z", {"x": 1})
    r.execute_command("SELECT", 0)


def snapshot(r):
    """{db: {key: (type, value, has_ttl)}} read through plain commands."""
    out = {}
    for db in (0, 5):
        r.execute_command("SELECT", db)
        d = {}
        for k in sorted(r.keys("*")):
            t = r.type(k)
            if t == "string":
                v = r.get(k)
            elif t == "list":
                v = r.lrange(k, 0, -1)
            elif t == "set":
                v = sorted(r.smembers(k))
            elif t == "zset":
                v = r.zrange(k, 0, -1, withscores=True)
            else:
                v = sorted(r.hgetall(k).items())
            d[k] = (t, v, r.pttl(k) > 0)
        out[db] = d
    r.execute_command("SELECT", 0)
    return out


def ttls(r, keys):
    return {k: r.pttl(k) for k in keys}


def wait_info(r, section, field, value, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if str(r.info(section).get(field)) == str(value):
            return True
        time.sleep(0.05)
    return False


def bgsave(r, *args):
    """BGSAVE's status text (redis-py would turn it into True)."""
    r.set_response_callback("BGSAVE", lambda resp, **kw: resp)
    r.set_response_callback("BGREWRITEAOF", lambda resp, **kw: resp)
    return r.execute_command("BGSAVE", *args)
