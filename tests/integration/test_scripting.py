"""Lua scripting as clients use it: redis-py's Lock (acquire, extend,
release, reacquire), a sliding-window rate limiter, an ioredis-style
defineCommand (EVALSHA, NOSCRIPT, then EVAL), the script cache, EVAL_RO,
scripts inside MULTI, WATCH and keyspace notifications seeing a script's
writes, the effects in the AOF (MULTI/EXEC around more than one command)
and the INFO figures.  Reply texts are checked against Redis 7.0 in
test_scripting_differential.py; long scripts in test_scripting_busy.py."""
import hashlib
import os
import time

import pytest
import redis

from conftest import aof_file


def sha(body):
    return hashlib.sha1(body.encode()).hexdigest()


def test_redis_py_lock_acquire_extend_release_reacquire(r):
    lock = r.lock("resource", timeout=5)
    assert lock.acquire(blocking=False)
    assert 4000 < r.pttl("resource") <= 5000
    assert lock.extend(10)
    assert 14000 < r.pttl("resource") <= 15000
    other = r.lock("resource", timeout=5)
    assert not other.acquire(blocking=False)
    lock.release()
    assert r.exists("resource") == 0
    assert other.acquire(blocking=False)
    other.release()
    # a lock that expired and was taken by someone else cannot be released
    # (the release script compares tokens) nor extended
    short = r.lock("resource", timeout=0.2)
    assert short.acquire(blocking=False)
    time.sleep(0.3)
    assert other.acquire(blocking=False)
    with pytest.raises(redis.exceptions.LockNotOwnedError):
        short.release()
    assert r.exists("resource") == 1
    other.release()
    # the context-manager form
    with r.lock("resource", timeout=2, blocking_timeout=1):
        assert r.exists("resource")
    assert not r.exists("resource")


RATE_LIMIT = """
local key, now, window, limit = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
if redis.call('ZCARD', key) >= limit then return 0 end
redis.call('ZADD', key, now, ARGV[4])
redis.call('PEXPIRE', key, window)
return 1
"""


def test_sliding_window_rate_limiter(r):
    limiter = r.register_script(RATE_LIMIT)
    allowed = [limiter(keys=["rl"], args=[1000 + i, 100, 5, "req%d" % i]) for i in range(8)]
    assert allowed == [1, 1, 1, 1, 1, 0, 0, 0]
    # once the window has slid past the first requests, more are allowed
    assert limiter(keys=["rl"], args=[1102, 100, 5, "late"]) == 1
    assert r.zrange("rl", 0, -1) == ["req3", "req4", "late"]
    assert 0 < r.pttl("rl") <= 100


def test_define_command_style_evalsha_then_eval(r):
    body = "return redis.call('INCRBY', KEYS[1], ARGV[1])"
    digest = sha(body)
    r.script_flush()
    with pytest.raises(redis.exceptions.NoScriptError):
        r.evalsha(digest, 1, "n", 2)
    assert r.eval(body, 1, "n", 2) == 2
    assert r.evalsha(digest, 1, "n", 3) == 5
    assert r.evalsha(digest.upper(), 1, "n", 1) == 6


def test_script_cache(r):
    r.script_flush()
    digest = r.script_load("return 'cached'")
    assert digest == sha("return 'cached'")
    assert r.script_exists(digest, "0" * 40) == [True, False]
    assert r.info("memory")["number_of_cached_scripts"] == 1
    assert r.evalsha(digest, 0) == "cached"
    r.script_flush()
    assert r.script_exists(digest) == [False]
    assert r.info("memory")["number_of_cached_scripts"] == 0
    with pytest.raises(redis.exceptions.ResponseError, match="Error compiling script"):
        r.script_load("return +")


def test_eval_ro_refuses_writes(r):
    r.set("k", "v")
    assert r.eval_ro("return redis.call('GET', KEYS[1])", 1, "k") == "v"
    with pytest.raises(redis.exceptions.ResponseError, match="Write commands are not allowed from read-only scripts"):
        r.eval_ro("return redis.call('SET', KEYS[1], 'x')", 1, "k")
    assert r.get("k") == "v"


def test_script_inside_multi(r):
    p = r.pipeline(transaction=True)
    p.set("a", "1")
    p.eval("return redis.call('INCR', KEYS[1])", 1, "a")
    p.get("a")
    assert p.execute() == [True, 2, "2"]


def test_watch_sees_a_script_write(server, r):
    r.set("w", "1")
    other = server.client()
    p = r.pipeline(transaction=True)
    p.watch("w")
    other.eval("return redis.call('SET', KEYS[1], '2')", 1, "w")
    p.multi()
    p.set("w", "3")
    with pytest.raises(redis.exceptions.WatchError):
        p.execute()
    assert r.get("w") == "2"
    other.close()


def test_keyspace_notifications_from_a_script(server, r):
    r.config_set("notify-keyspace-events", "KEA")
    try:
        sub = server.client().pubsub()
        sub.psubscribe("__keyspace@0__:*")
        sub.get_message(timeout=1)
        r.eval("redis.call('SET', KEYS[1], 'v') redis.call('EXPIRE', KEYS[1], 100)", 1, "nk")
        events = []
        deadline = time.time() + 3
        while len(events) < 2 and time.time() < deadline:
            m = sub.get_message(timeout=0.5)
            if m and m["type"] == "pmessage":
                events.append(m["data"])
        assert events == ["set", "expire"]
        sub.close()
    finally:
        r.config_set("notify-keyspace-events", "")


def test_blocking_command_in_a_script_does_not_block_as_redis_74_does(r):
    # Redis 7.0 flagged BLPOP "noscript"; since 7.2 a script may call it and
    # it does not block: it pops what is there or answers null (checked
    # against Redis 7.4.1 in test_r74_surface.py).
    r.rpush("l", "x")
    assert r.eval("return redis.call('BLPOP', KEYS[1], 0)", 1, "nolist") is None
    assert r.eval("return redis.call('BLPOP', KEYS[1], 0)", 1, "l") == ["l", "x"]
    assert r.lrange("l", 0, -1) == []


def test_script_push_serves_a_blocked_client(server, r):
    import threading
    other = server.client()
    got = []
    t = threading.Thread(target=lambda: got.append(other.blpop("q", timeout=5)))
    t.start()
    time.sleep(0.2)
    r.eval("redis.call('RPUSH', KEYS[1], 'item')", 1, "q")
    t.join(6)
    assert got == [("q", "item")]
    other.close()


def test_select_inside_a_script_stays_inside(r):
    r.eval("redis.call('SELECT', 3) redis.call('SET', 'in3', 'x')", 0)
    assert r.get("in3") is None
    r.execute_command("SELECT", 3)
    assert r.get("in3") == "x"
    r.execute_command("SELECT", 0)


def test_info_memory_and_flush_return_lua_memory(r):
    r.script_flush()
    base = r.info("memory")
    for k in ("used_memory_lua", "used_memory_vm_eval", "used_memory_scripts_eval", "number_of_cached_scripts",
              "number_of_functions", "number_of_libraries", "used_memory_vm_functions", "used_memory_vm_total",
              "used_memory_functions", "used_memory_scripts"):
        assert k in base, k
    for i in range(200):
        r.eval("local t = {} for i=1,100 do t[i] = '%d' .. i end return #t" % i, 0)
    grown = r.info("memory")
    assert grown["number_of_cached_scripts"] == 200
    assert grown["used_memory_scripts_eval"] > base["used_memory_scripts_eval"] + 200 * 40
    assert grown["used_memory_lua"] > base["used_memory_lua"]
    r.script_flush()
    after = r.info("memory")
    assert after["number_of_cached_scripts"] == 0
    assert after["used_memory_lua"] < grown["used_memory_lua"]
    assert after["used_memory"] < grown["used_memory"]


def test_script_effects_in_the_aof(start_server):
    s = start_server(args=("--appendonly", "yes"))
    r = s.client()
    r.eval("redis.call('SET', 'a', '1') redis.call('INCR', 'a') redis.call('RPUSH', 'l', 'x')", 0)
    r.eval("redis.call('SET', 'single', 'v')", 0)
    r.eval("return redis.call('GET', 'a')", 0)                      # read-only: nothing logged
    r.eval("redis.set_repl(redis.REPL_NONE) redis.call('SET', 'hidden', 'v')", 0)
    data = open(aof_file(s.dir, "i"), "rb").read()                 # the incr file the effects went to
    assert b"EVAL" not in data.upper()
    multi = b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$4\r\nINCR\r\n$1\r\na\r\n" \
            b"*3\r\n$5\r\nRPUSH\r\n$1\r\nl\r\n$1\r\nx\r\n*1\r\n$4\r\nEXEC\r\n"
    assert multi in data
    assert data.count(b"MULTI") == 1
    assert b"*3\r\n$3\r\nSET\r\n$6\r\nsingle\r\n$1\r\nv\r\n" in data
    assert b"hidden" not in data
    s.stop()
    s2 = start_server(args=("--appendonly", "yes", "--dir", s.dir))
    r2 = s2.client()
    assert r2.get("a") == "2" and r2.lrange("l", 0, -1) == ["x"] and r2.get("single") == "v"
    assert r2.get("hidden") is None


def test_oom_in_a_script(start_server):
    s = start_server()
    r = s.client()
    for i in range(10):
        r.set("fill%d" % i, "v" * 100_000)
    r.config_set("maxmemory", str(r.info("memory")["used_memory"] // 2))
    with pytest.raises(redis.exceptions.ResponseError, match="OOM command not allowed"):
        r.eval("return redis.call('SET', 'k', 'v')", 0)
    # reads still work, and a shebang script with allow-oom may write
    assert r.eval("return redis.call('EXISTS', 'fill0')", 0) == 1
    assert r.eval("#!lua flags=allow-oom\nreturn redis.call('SET', 'k', 'v')", 0) == "OK"
    with pytest.raises(redis.exceptions.ResponseError, match="OOM"):
        r.eval("#!lua\nreturn 1", 0)
    assert r.eval("#!lua flags=no-writes\nreturn 1", 0) == 1


@pytest.mark.differential
def wait_loaded(c):
    deadline = time.time() + 10
    while True:
        try:
            return c.ping()
        except redis.exceptions.BusyLoadingError:
            if time.time() > deadline:
                raise
            time.sleep(0.05)


def test_aof_script_effects_round_trip_with_redis(start_server):
    from conftest import REDIS_SERVER
    script = ("redis.call('SET', KEYS[1], ARGV[1]) redis.call('INCRBY', KEYS[2], 5) "
              "redis.call('EXPIRE', KEYS[1], 1000) redis.call('RPUSH', 'l', ARGV[1]) return 1")
    # ours -> Redis 7.0.15: it reads our appendonlydir (manifest, RDB base, incr file)
    ours = start_server(args=("--appendonly", "yes"))
    r = ours.client()
    for i in range(5):
        r.eval(script, 2, "k%d" % i, "n", "v%d" % i)
    r.eval("redis.call('SELECT', 2) redis.call('SET', 'in2', 'x') redis.call('DEL', 'nothing')", 0)
    ours.stop()
    ref = start_server(binary=REDIS_SERVER, args=("--appendonly", "yes", "--dir", ours.dir))
    rr = ref.client()
    wait_loaded(rr)
    assert rr.get("n") == "25" and rr.lrange("l", 0, -1) == ["v%d" % i for i in range(5)]
    assert rr.get("k3") == "v3" and 900 < rr.ttl("k3") <= 1000
    rr.execute_command("SELECT", 2)
    assert rr.get("in2") == "x"
    ref.stop()
    # Redis 7.0.15 -> ours: its base + incremental files, concatenated into an
    # old single-file AOF (which ours moves into appendonlydir at start-up), replay here
    ref2 = start_server(binary=REDIS_SERVER, args=("--appendonly", "yes", "--aof-use-rdb-preamble", "no"))
    r2 = ref2.client()
    for i in range(5):
        r2.eval(script, 2, "k%d" % i, "n", "v%d" % i)
    ref2.stop()
    d = os.path.join(ref2.dir, "appendonlydir")
    files = sorted(os.listdir(d))
    base = [f for f in files if ".base.aof" in f]
    incr = [f for f in files if ".incr.aof" in f]
    data = b"".join(open(os.path.join(d, f), "rb").read() for f in base + incr)
    assert b"MULTI" in data and b"EVAL" not in data.upper().replace(b"EVALSHA", b"")
    target = os.path.join(ref2.dir, "ours")
    os.makedirs(target)
    with open(os.path.join(target, "appendonly.aof"), "wb") as f:
        f.write(data)
    ours2 = start_server(args=("--appendonly", "yes", "--dir", target))
    o2 = ours2.client()
    wait_loaded(o2)
    assert o2.get("n") == "25" and o2.lrange("l", 0, -1) == ["v%d" % i for i in range(5)]
    assert 900 < o2.ttl("k4") <= 1000
