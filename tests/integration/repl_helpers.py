"""Helpers for the replication tests: waiting for links and offsets, a
random write load touching every data type, and a content snapshot that
compares datasets across implementations (DUMP payloads differ between
encodings, so values are read back through commands instead)."""
import random
import socket
import time


def wait_for(cond, timeout=20, step=0.05, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        time.sleep(step)
    raise AssertionError("timed out waiting for " + what)


def link_up(c):
    return c.info("replication").get("master_link_status") == "up"


def wait_link_up(c, timeout=30):
    wait_for(lambda: link_up(c), timeout, what="master_link_status:up")


def settle(master):
    """Let the load's short-lived keys expire, and make the master notice
    (a read expires them there, which sends DEL to the replicas)."""
    time.sleep(0.1)
    for key in list(master.scan_iter("short:*", count=1000)):
        master.get(key)


def wait_caught_up(master, replica, timeout=30):
    """The replica applied everything the master has sent so far."""
    settle(master)
    def same():
        mo = master.info("replication")["master_repl_offset"]
        ro = replica.info("replication").get("slave_repl_offset", -1)
        return mo == ro
    wait_for(same, timeout, what="replica offset == master offset")


def snapshot(c, dbs=(0, 1)):
    """{(db, key): (type, value, has_ttl)} read through commands."""
    out = {}
    for db in dbs:
        c.execute_command("SELECT", db)
        for key in c.scan_iter(count=500):
            t = c.type(key)
            if t == "string":
                v = c.get(key)
            elif t == "list":
                v = tuple(c.lrange(key, 0, -1))
            elif t == "set":
                v = tuple(sorted(c.smembers(key)))
            elif t == "zset":
                v = tuple(c.zrange(key, 0, -1, withscores=True))
            elif t == "hash":
                v = tuple(sorted(c.hgetall(key).items()))
            elif t == "stream":
                v = tuple((i, tuple(sorted(f.items()))) for i, f in c.xrange(key))
            else:
                v = None
            if t == "none":
                continue   # expired between SCAN and TYPE
            out[(db, key)] = (t, v, c.pttl(key) > 0)
    c.execute_command("SELECT", 0)
    return out


SCRIPT = "redis.call('INCR', KEYS[1]); redis.call('RPUSH', KEYS[2], ARGV[1]); return 1"


def random_load(c, n, seed, keys=60):
    """n random writes of every type on db 0 and 1 (c stays on db 0)."""
    rnd = random.Random(seed)
    k = lambda p: "%s:%d" % (p, rnd.randrange(keys))
    for i in range(n):
        op = rnd.randrange(24)
        v = str(rnd.randrange(1000))
        try:
            if op == 0:
                c.set(k("s"), v)
            elif op == 1:
                c.append(k("s"), v)
            elif op == 2:
                c.incrby(k("n"), rnd.randrange(-5, 10))
            elif op == 3:
                c.set(k("s"), v, ex=rnd.randrange(100, 1000))
            elif op == 4:
                c.rpush(k("l"), v, v + "x")
            elif op == 5:
                c.lpop(k("l"))
            elif op == 6:
                c.ltrim(k("l"), 0, 5)
            elif op == 7:
                c.sadd(k("set"), v, rnd.randrange(50))
            elif op == 8:
                c.spop(k("set"))
            elif op == 9:
                c.zadd(k("z"), {v: rnd.random() * 100})
            elif op == 10:
                c.zincrby(k("z"), 1.5, v)
            elif op == 11:
                c.hset(k("h"), v, v * 2)
            elif op == 12:
                c.hincrby(k("h"), "cnt", 1)
            elif op == 13:
                c.hdel(k("h"), v)
            elif op == 14:
                c.xadd(k("x"), {"f": v})
            elif op == 15:
                c.xtrim(k("x"), maxlen=5)
            elif op == 16:
                c.expire(k("s"), rnd.randrange(100, 1000))
            elif op == 17:
                c.delete(k("l"))
            elif op == 18:
                c.set("short:%d" % i, v, px=rnd.randrange(1, 40))   # expires during the load
            elif op == 19:
                p = c.pipeline(transaction=True)
                p.incr(k("n"))
                p.rpush(k("l"), v)
                p.execute()
            elif op == 20:
                c.eval(SCRIPT, 2, k("n"), k("l"), v)
            elif op == 21:
                c.execute_command("SELECT", 1)
                c.set(k("db1"), v)
                c.execute_command("SELECT", 0)
            elif op == 22:
                c.srem(k("set"), v)
            elif op == 23:
                c.zremrangebyrank(k("z"), 0, 1)
        except Exception as e:  # WRONGTYPE on a reused name is fine
            if "WRONGTYPE" not in str(e):
                raise


def closed_loopback_port():
    """A loopback port nothing listens on (bound, then released): a master
    that is never reached, so the replica's link stays down."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
