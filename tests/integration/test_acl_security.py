"""ACL security tests: attempts to get around the rules.

- A user limited to ~app:* tries to read or write "secret:*" keys through
  every command with keys: a hand-written list of the tricky forms (SORT
  BY/GET, RENAME and COPY across patterns, *STORE destinations, OBJECT,
  MEMORY USAGE, DUMP/RESTORE, numkeys forms, scripts and functions), then a
  sweep over every command COMMAND INFO lists with keys, called with the
  secret key in every position.  Nothing may succeed, the secret values
  must stay unchanged and never appear in a reply.
- A user without @dangerous tries CONFIG, DEBUG, FLUSHALL, SHUTDOWN,
  MONITOR and the ACL administration subcommands.
- A disabled user tries to authenticate.
- A brute-force AUTH run: every failure is logged and counted, and a
  client doing ordinary work meanwhile is not slowed down.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_acl_security.py"""
import threading
import time

import pytest
import redis

from rawresp import RawConn

SECRET = "TOPSECRETVALUE"
SECRET_KEYS = {"secret:str": ("set", [SECRET]), "secret:list": ("rpush", [SECRET, "2"]),
               "secret:set": ("sadd", [SECRET]), "secret:zset": ("zadd", ["1", SECRET]),
               "secret:hash": ("hset", ["f", SECRET]), "secret:stream": ("xadd", ["1-1", "f", SECRET])}


@pytest.fixture
def setup(server):
    admin = server.client()
    admin.flushall()
    admin.execute_command("ACL", "SETUSER", "app", "reset", "on", ">apppw", "~app:*", "+@all", "-@dangerous",
                          "+sort", "+sort_ro", "+restore", "+migrate", "&app.*")
    for k, (cmd, args) in SECRET_KEYS.items():
        admin.execute_command(cmd, k, *args)
    admin.set("app:str", "1")
    admin.rpush("app:list", "3", "1", "2")
    admin.sadd("app:set", "a")
    admin.set("app:w_1", "1")
    snapshot = {k: admin.dump(k) for k in SECRET_KEYS}
    user = RawConn(server.port)
    assert user.call("AUTH", "app", "apppw") == "OK"
    yield admin, user, snapshot
    admin.execute_command("ACL", "DELUSER", "app")


def assert_secrets_intact(admin, snapshot):
    assert {k: admin.dump(k) for k in SECRET_KEYS} == snapshot
    assert set(admin.keys("secret:*")) == set(SECRET_KEYS)


def refused(reply):
    return isinstance(reply, tuple) and reply[0] == "err"


# Each is run as the app user; every one names a secret key somewhere.
ATTEMPTS = [
    ["get", "secret:str"], ["getrange", "secret:str", "0", "-1"], ["strlen", "secret:str"],
    ["mget", "app:str", "secret:str"], ["getdel", "secret:str"], ["getex", "secret:str"],
    ["set", "secret:str", "x"], ["mset", "app:a", "1", "secret:str", "2"], ["msetnx", "secret:new", "1"],
    ["append", "secret:str", "x"], ["incr", "secret:n"], ["del", "secret:str"], ["unlink", "app:str", "secret:str"],
    ["exists", "secret:str"], ["type", "secret:str"], ["ttl", "secret:str"], ["expire", "secret:str", "1"],
    ["persist", "secret:str"], ["touch", "secret:str"],
    ["rename", "app:str", "secret:str"], ["rename", "secret:str", "app:stolen"], ["renamenx", "secret:str", "app:x"],
    ["copy", "secret:str", "app:copy"], ["copy", "app:str", "secret:str", "replace"],
    ["move", "secret:str", "1"], ["dump", "secret:str"],
    ["restore", "secret:str", "0", b"\x00\x01x\x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00", "replace"],
    ["object", "encoding", "secret:str"], ["object", "freq", "secret:str"], ["object", "idletime", "secret:str"],
    ["object", "refcount", "secret:str"], ["memory", "usage", "secret:str"],
    ["sort", "secret:list"], ["sort", "app:list", "by", "secret:*"], ["sort", "app:list", "get", "secret:*"],
    ["sort", "app:list", "by", "app:w_*", "get", "#"], ["sort", "app:list", "store", "secret:list"],
    ["sort_ro", "secret:list"], ["sort_ro", "app:list", "get", "secret:*"],
    ["lrange", "secret:list", "0", "-1"], ["lpop", "secret:list"], ["lmove", "secret:list", "app:l", "left", "left"],
    ["rpoplpush", "app:list", "secret:list"], ["lmpop", "2", "app:list", "secret:list", "left"],
    ["blmpop", "0.01", "2", "app:list", "secret:list", "left"], ["blpop", "secret:list", "0.01"],
    ["smembers", "secret:set"], ["sunionstore", "secret:set", "app:set"], ["sunionstore", "app:out", "secret:set"],
    ["sinterstore", "secret:set", "app:set"], ["sdiffstore", "app:o", "app:set", "secret:set"],
    ["sintercard", "2", "app:set", "secret:set"], ["smove", "secret:set", "app:set", SECRET],
    ["zrange", "secret:zset", "0", "-1"], ["zunionstore", "app:z", "2", "app:z", "secret:zset"],
    ["zunionstore", "secret:zset", "1", "app:z"], ["zrangestore", "app:z", "secret:zset", "0", "-1"],
    ["zinter", "2", "app:z", "secret:zset"], ["zdiff", "2", "app:z", "secret:zset"],
    ["hgetall", "secret:hash"], ["hget", "secret:hash", "f"], ["hset", "secret:hash", "f", "x"],
    ["xrange", "secret:stream", "-", "+"], ["xread", "streams", "app:s", "secret:stream", "0", "0"],
    ["xadd", "secret:stream", "*", "f", "v"], ["xinfo", "stream", "secret:stream"],
    ["bitop", "or", "secret:str", "app:str"], ["bitop", "or", "app:bits", "secret:str"],
    ["pfmerge", "secret:hll", "app:hll"], ["pfcount", "app:hll", "secret:hll"],
    ["georadius", "app:geo", "0", "0", "10", "km", "store", "secret:geo"],
    ["geosearchstore", "secret:geo", "app:geo", "fromlonlat", "0", "0", "byradius", "1", "km"],
    ["lcs", "app:str", "secret:str"], ["watch", "secret:str"],
    ["eval", "return redis.call('get', KEYS[1])", "1", "secret:str"],
    ["eval", "return redis.call('get', 'secret:str')", "0"],
    ["eval", "return redis.call('get', ARGV[1])", "1", "app:str", "secret:str"],
    ["eval", "return redis.pcall('set', 'secret:str', 'pwned')", "0"],
    ["eval_ro", "return redis.call('get', 'secret:str')", "0"],
    ["fcall", "nosuch", "1", "secret:str"],
    ["migrate", "127.0.0.1", "1", "", "0", "100", "keys", "app:str", "secret:str"],
]


def test_key_pattern_cannot_be_bypassed(setup):
    admin, user, snapshot = setup
    for args in ATTEMPTS:
        reply = user.call(*args)
        assert SECRET.encode() not in repr(reply).encode(), (args, reply)
        if args[0] in ("eval", "eval_ro") and isinstance(reply, tuple):
            assert refused(reply), (args, reply)
        elif args[0] == "sort" and args[-1] == "#":
            # BY/GET patterns need access to every key: refused even for
            # patterns inside the user's own space.
            assert refused(reply) and "insufficient ACL permissions" in reply[1], (args, reply)
        else:
            assert refused(reply), (args, reply)
        assert_secrets_intact(admin, snapshot)


def test_function_cannot_reach_other_keys(setup, server):
    admin, user, snapshot = setup
    admin.execute_command("FUNCTION", "LOAD", "REPLACE",
                          "#!lua name=steal\nredis.register_function('steal', function(keys, args) "
                          "return redis.call('get', 'secret:str') end)")
    reply = user.call("FCALL", "steal", "0")
    assert refused(reply) and reply[1].startswith("ERR ACL failure in script: No permissions to access a key"), reply
    reply = user.call("FCALL", "steal", "1", "secret:str")
    assert refused(reply) and reply[1] == "NOPERM No permissions to access a key", reply
    assert_secrets_intact(admin, snapshot)
    admin.execute_command("FUNCTION", "DELETE", "steal")


def test_multi_cannot_smuggle_commands(setup):
    admin, user, snapshot = setup
    assert user.call("MULTI") == "OK"
    assert refused(user.call("GET", "secret:str"))
    assert refused(user.call("FLUSHALL"))
    user.call("SET", "app:ok", "1")
    reply = user.call("EXEC")
    assert refused(reply) and reply[1].startswith("EXECABORT"), reply
    assert admin.get("app:ok") is None
    assert_secrets_intact(admin, snapshot)


def command_table(admin):
    """name -> (arity, first key, last key, step) for every command and subcommand."""
    out = {}
    for name, info in admin.command().items():
        out[name] = (info["arity"], info["first_key_pos"], info["last_key_pos"], info["step_count"])
        for sub in info.get("subcommands", []) or []:
            # redis-py leaves subcommand rows as raw lists
            sname = sub[0].decode() if isinstance(sub[0], bytes) else sub[0]
            out[sname] = (sub[1], sub[3], sub[4], sub[5])
    return out


def test_sweep_every_keyed_command(setup):
    """Every command with keys, called with the secret key in every
    argument position: none may run."""
    admin, user, snapshot = setup
    # SUNSUBSCRIBE's "key" is a shard channel (a not_key spec), and leaving
    # a channel needs no permission, as in Redis.
    skip = {"shutdown", "monitor", "debug", "quit", "reset", "sync", "psync", "exec", "multi", "sunsubscribe"}
    table = command_table(admin)
    tried = 0
    for name, (arity, first, last, step) in sorted(table.items()):
        if first <= 0 or name.split("|")[0] in skip:
            continue
        words = name.split("|")
        nargs = max(abs(arity), len(words) + 2)
        args = words + ["secret:str"] * (nargs - len(words))
        reply = user.call(*args)
        tried += 1
        assert refused(reply), (args, reply)
        assert SECRET.encode() not in repr(reply).encode(), (args, reply)
        assert_secrets_intact(admin, snapshot)
    assert tried > 150


@pytest.mark.parametrize("args", [
    ["config", "set", "maxmemory", "1"], ["config", "get", "*"], ["config", "rewrite"], ["config", "resetstat"],
    ["debug", "sleep", "0"], ["flushall"], ["flushdb"], ["shutdown", "nosave"], ["monitor"],
    ["acl", "setuser", "app", "+@all"], ["acl", "deluser", "default"], ["acl", "list"], ["acl", "log"],
    ["acl", "getuser", "default"], ["acl", "users"], ["acl", "save"], ["acl", "load"], ["acl", "dryrun", "app", "get", "x"],
    ["client", "kill", "id", "1"], ["client", "list"], ["save"], ["bgsave"], ["bgrewriteaof"], ["slowlog", "get"],
    ["keys", "*"], ["swapdb", "0", "1"], ["lastsave"], ["info"], ["latency", "reset"],
])
def test_no_dangerous_commands_without_dangerous(setup, server, args):
    admin, user, snapshot = setup
    reply = user.call(*args)
    assert refused(reply) and reply[1].startswith("NOPERM"), (args, reply)
    assert admin.ping()   # still up
    assert_secrets_intact(admin, snapshot)
    # Even a script cannot.
    reply = user.call("EVAL", "return redis.call(unpack(ARGV))", "0", *args)
    assert refused(reply), (args, reply)
    # The user still cannot reach ACL administration to lift its limits.
    assert refused(user.call("ACL", "SETUSER", "app", "allkeys"))


def test_disabled_user_cannot_authenticate(server):
    admin = server.client()
    admin.execute_command("ACL", "SETUSER", "off1", "reset", "off", ">pw", "+@all", "~*")
    for args in (("AUTH", "off1", "pw"), ("HELLO", "3", "AUTH", "off1", "pw")):
        c = RawConn(server.port)
        reply = c.call(*args)
        assert reply == ("err", "WRONGPASS invalid username-password pair or user is disabled."), reply
        assert c.call("ACL", "WHOAMI") == b"default"
    # nopass does not help a disabled user either
    admin.execute_command("ACL", "SETUSER", "off1", "nopass")
    assert RawConn(server.port).call("AUTH", "off1", "anything")[0] == "err"
    admin.execute_command("ACL", "DELUSER", "off1")


def test_brute_force_logged_and_harmless(server):
    admin = server.client()
    admin.execute_command("ACL", "SETUSER", "bf", "reset", "on", ">correct-horse", "+@all", "~*")
    admin.execute_command("ACL", "LOG", "RESET")
    before = admin.info("stats")["acl_access_denied_auth"]
    n = 3000
    lat = []
    stop = threading.Event()
    started = threading.Event()  # a loaded machine may start the thread late

    def worker():
        c = RawConn(server.port)
        while not stop.is_set():
            t0 = time.perf_counter()
            assert c.call("GET", "x") is None
            lat.append(time.perf_counter() - t0)
            started.set()

    base = RawConn(server.port)
    t0 = time.perf_counter()
    for _ in range(200):
        base.call("GET", "x")
    baseline = (time.perf_counter() - t0) / 200
    th = threading.Thread(target=worker)
    th.start()
    assert started.wait(30), "the worker never got a reply"
    attacker = RawConn(server.port)
    payload = b"".join(b"*3\r\n$4\r\nAUTH\r\n$2\r\nbf\r\n$%d\r\n%s\r\n" % (len(p), p)
                       for p in (b"guess%d" % i for i in range(n)))
    t0 = time.perf_counter()
    attacker.sock.sendall(payload)
    for _ in range(n):
        assert attacker.read()[0] == "err"
    elapsed = time.perf_counter() - t0
    stop.set()
    th.join(10)
    # Every failure counted; the log groups them into one entry per user.
    assert admin.info("stats")["acl_access_denied_auth"] - before == n
    log = admin.acl_log()
    assert log[0]["reason"] == "auth" and log[0]["username"] == "bf" and log[0]["count"] == n
    # No slow-down imposed: thousands of failures answer in well under a
    # second each batch, and the other client's requests stay fast.
    assert elapsed < 10, elapsed
    lat.sort()
    assert lat, "worker made no requests"
    assert lat[len(lat) // 2] < max(0.05, baseline * 50), (lat[len(lat) // 2], baseline)
    # The right password still works afterwards (no lock-out).
    assert RawConn(server.port).call("AUTH", "bf", "correct-horse") == "OK"
    admin.execute_command("ACL", "DELUSER", "bf")
