"""Redis 7.2/7.4's surface beyond hash field expiry (issue 47), against Redis
7.4.1: live when utils/dev/redis74-ref.sh can build it, else its replies from
transcripts/r74_surface_74.json.gz and r74_waitaof_74.json.gz (ref74.py;
utils/dev/gen-74-transcripts.py records them).

Covered: WAITAOF (replies, errors, local fsync under each appendfsync, a
replica's FACK, demotion), CLIENT NO-TOUCH, CLIENT KILL MAXAGE, CLIENT
HELP/INFO (lib-name, lib-ver, watch=), XREAD ... +, XINFO's inactive and
active-time, the 'n' (new key) event, INFO's 7.2/7.4 fields and section
order, HELLO's version, and 7.4's changed texts and argument checks
(BITCOUNT/BITPOS, timeouts out of range, XREAD BLOCK in scripts, COMMAND
GETKEYS).  Hash field expiry itself: test_hash_ttl_74.py; COMMAND
INFO/DOCS: test_command_meta.py."""
import socket
import time

import pytest
import redis

import benchlib
import hash_ttl_scenarios as sc
from ref74 import Ref74, binary as ref74_binary
from test_info_fields import OURS_ONLY  # our own INFO fields (no Redis has them)
from conftest import memory_stats, parse_memory_stats

pytestmark = pytest.mark.differential

SCENARIOS = {
    "help_texts": [
        ["CLIENT", "HELP"], ["OBJECT", "HELP"], ["XINFO", "HELP"], ["LATENCY", "HELP"], ["CONFIG", "HELP"],
    ],
    "waitaof_without_aof": [
        ["WAITAOF", "2", "0", "0"], ["WAITAOF", "-1", "0", "0"], ["WAITAOF", "0", "-1", "0"],
        ["WAITAOF", "0", "0", "-1"], ["WAITAOF", "0", "0", "x"], ["WAITAOF", "x", "0", "0"], ["WAITAOF", "0", "0"],
        ["WAITAOF", "1", "0", "0"], ["SET", "k", "v"], ["WAITAOF", "0", "0", "0"],
        ["WAITAOF", "0", "0", "9223372036854775807"], ["WAIT", "0", "9223372036854775807"],
    ],
    "no_touch": [
        ["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"], ["SET", "k", "v"], ["OBJECT", "FREQ", "k"],
        ["CLIENT", "NO-TOUCH", "on"], ["GET", "k"], ["GET", "k"], ["OBJECT", "FREQ", "k"],
        ["@field:flags", "CLIENT", "INFO"], ["TOUCH", "k"], ["OBJECT", "FREQ", "k"],
        ["CLIENT", "NO-TOUCH", "OFF"], ["CLIENT", "NO-TOUCH", "x"],
        ["CLIENT", "NO-TOUCH"], ["CONFIG", "SET", "maxmemory-policy", "noeviction"],
    ],
    "client_kill_maxage": [
        ["CLIENT", "KILL", "MAXAGE", "0"], ["CLIENT", "KILL", "MAXAGE", "x"], ["CLIENT", "KILL", "MAXAGE", "-5"],
        ["CLIENT", "KILL", "MAXAGE", "1000"], ["CLIENT", "KILL", "MAXAGE", "1000", "SKIPME", "no"],
        ["CLIENT", "KILL", "MAXAGE"],
    ],
    "client_info": [
        ["@fields", "CLIENT", "INFO"], ["CLIENT", "SETINFO", "lib-name", "redis-py"],
        ["CLIENT", "SETINFO", "LIB-VER", "5.0"], ["CLIENT", "SETINFO", "lib-name", "a b"],
        ["CLIENT", "SETINFO", "foo", "x"], ["WATCH", "a", "b", "c"], ["@field:watch", "CLIENT", "INFO"],
        ["@field:lib-name", "CLIENT", "INFO"], ["@field:lib-ver", "CLIENT", "INFO"], ["UNWATCH"],
        ["@field:watch", "CLIENT", "INFO"], ["@pick:version", "HELLO"],
    ],
    "xread_plus": [
        ["XADD", "s", "1-1", "a", "b"], ["XADD", "s", "2-1", "c", "d"], ["XREAD", "STREAMS", "s", "+"],
        ["XREAD", "COUNT", "5", "STREAMS", "s", "nokey", "+", "+"], ["XREAD", "STREAMS", "nokey", "+"],
        ["XREAD", "STREAMS", "s", "+", "0"], ["XREAD", "BLOCK", "10", "STREAMS", "s", "+"],
        ["XGROUP", "CREATE", "s", "g", "0"], ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "+"],
        ["XDEL", "s", "2-1"], ["XREAD", "STREAMS", "s", "+"],
        ["XGROUP", "CREATE", "e", "g", "0", "MKSTREAM"], ["XREAD", "STREAMS", "e", "+"],
        ["XREAD", "STREAMS", "s", "t", "0"], ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "t", ">"],
    ],
    "xinfo_fields": [
        ["XADD", "s", "1-1", "a", "b"], ["XADD", "s", "2-1", "c", "d"], ["XGROUP", "CREATE", "s", "g", "0"],
        ["XGROUP", "CREATECONSUMER", "s", "g", "idle"], ["@times", "XINFO", "CONSUMERS", "s", "g"],
        ["@times", "XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">"],
        ["@times", "XINFO", "CONSUMERS", "s", "g"], ["@times", "XCLAIM", "s", "g", "idle", "0", "1-1"],
        ["@times", "XINFO", "CONSUMERS", "s", "g"], ["@times", "XAUTOCLAIM", "s", "g", "c3", "0", "0"],
        ["@times", "XINFO", "CONSUMERS", "s", "g"], ["@times", "XINFO", "STREAM", "s", "FULL"],
    ],
    "parse_first": [  # 7.2: BITCOUNT/BITPOS check their arguments before the key
        ["BITCOUNT", "nokey", "0"], ["BITCOUNT", "nokey", "0", "1", "x"], ["BITCOUNT", "nokey", "a", "1"],
        ["BITCOUNT", "nokey", "0", "1"], ["BITPOS", "nokey", "0"], ["BITPOS", "nokey", "1", "0", "5"],
        ["BITPOS", "nokey", "0", "x"], ["BITPOS", "nokey", "0", "0", "5", "x"], ["RPUSH", "l", "a"],
        ["BITCOUNT", "l", "0", "1", "x"], ["BITCOUNT", "l", "0", "1"], ["SET", "k", "\xff"],
        ["BITCOUNT", "k", "-1", "-5", "nope"], ["BITCOUNT", "k", "-1", "-5"], ["BITCOUNT", "k", "0"],
    ],
    "timeouts_and_scripts": [
        ["BLPOP", "x", "9223372036854775807"], ["BRPOP", "x", "inf"], ["BLPOP", "x", "-1"],
        ["EVAL", "return redis.call('xread','block','0','streams','s','$')", "0"],
        ["EVAL", "return redis.pcall('xread','block','100','streams','nosuch','0')", "0"],
        ["EVAL", "return redis.call('XREADGROUP','GROUP','g','c','BLOCK','10','STREAMS','s','>')", "0"],
        ["XADD", "s", "1-1", "a", "b"], ["EVAL", "return redis.call('xread','block','0','streams','s','0')", "0"],
        ["XGROUP", "CREATE", "s", "g", "$"],
        ["EVAL", "return redis.call('XREADGROUP','GROUP','g','c','BLOCK','10','STREAMS','s','>')", "0"],
        ["RPUSH", "l", "x"], ["EVAL", "return redis.call('BLPOP', KEYS[1], 0)", "1", "nolist"],
        ["EVAL", "return redis.call('BLPOP', KEYS[1], 0)", "1", "l"],
        ["EVAL", "return redis.call('BZPOPMIN', 'z', 0)", "0"], ["EVAL", "return redis.call('WAIT', 0, 0)", "0"],
        ["EVAL", "return redis.call('WAITAOF', 0, 0, 0)", "0"],
        ["COMMAND", "GETKEYS", "get"], ["COMMAND", "GETKEYS", "get", "a"], ["SCAN", "0", "TYPE", "nosuch"],
        ["EVAL", "return redis.REDIS_VERSION", "0"], ["EVAL", "return redis.REDIS_VERSION_NUM", "0"],
    ],
}

TIME_FIELDS = (b"idle", b"inactive", b"seen-time", b"active-time")


def with_times_masked(x):
    """Replies with clock readings (XINFO's idle/inactive, seen/active
    times, PEL delivery times) made comparable: -1 stays (never), any
    other time becomes "t"."""
    if isinstance(x, list):
        out = []
        for i, v in enumerate(x):
            if i > 0 and x[i - 1] in TIME_FIELDS and isinstance(v, int) and v != -1:
                v = "t"
            elif isinstance(v, int) and v > 10 ** 12:  # a unix-ms delivery time
                v = "t"
            out.append(with_times_masked(v))
        return out
    return x


def client_fields(line):
    return dict(kv.split(b"=", 1) for kv in line.strip().split(b" "))


def run(client, cmds):
    client.response_callbacks.clear()
    out = []
    for cmd in cmds:
        mark, args = (cmd[0], cmd[1:]) if cmd[0].startswith("@") else (None, cmd)
        try:
            reply = client.execute_command(*args)
        except redis.ResponseError as e:
            out.append({"err": str(e)})
            continue
        if mark == "@fields":
            reply = [k for k in client_fields(reply)]
        elif mark and mark.startswith("@field:"):
            reply = client_fields(reply)[mark[7:].encode()]
        elif mark and mark.startswith("@pick:"):
            reply = reply[reply.index(mark[6:].encode()) + 1]
        elif mark == "@times":
            reply = with_times_masked(reply)
        out.append(sc.value(reply))
    return out


@pytest.fixture(scope="module")
def ref():
    r = Ref74("r74_surface")
    yield r
    r.stop()


def ref_run(ref, name, cmds):
    def live():
        c = ref.server.client(decode_responses=False)
        c.flushall()
        return run(c, cmds)
    return ref.reply(["scenario", name], live)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_replies_are_74s(server, ref, name):
    c = server.client(decode_responses=False)
    c.flushall()
    assert run(c, SCENARIOS[name]) == ref_run(ref, name, SCENARIOS[name])


# INFO: the fields we do not have (none left: test_config_74.py checks the
# event loop's durations) and our own.
INFO_NOT_YET = set()


def info_fields(c):
    c.response_callbacks.clear()
    text = c.execute_command("INFO", "everything")
    text = text.decode() if isinstance(text, bytes) else text
    sections, cur = [], None
    for line in text.splitlines():
        if line.startswith("# "):
            cur = [line[2:], []]
            sections.append(cur)
        elif line and cur and cur[0] not in ("Keyspace", "Commandstats", "Errorstats", "Latencystats"):
            cur[1].append(line.split(":", 1)[0])
    return sections


def test_info_sections_and_fields_are_74s(server, ref):
    c = server.client()
    c.set("k", "v")
    mine = info_fields(c)
    theirs = ref.reply(["info fields"], lambda: info_fields(ref.server.client()))
    assert [s[0] for s in mine] == [s[0] for s in theirs]
    for (name, ours), (_, refs) in zip(mine, theirs):
        extra = [f for f in ours if f not in refs]
        assert [f for f in refs if f not in ours and f not in INFO_NOT_YET] == [], name
        # ours alone: test_info_fields.py's list, io_uring and RSS breakdown figures
        assert all(f in OURS_ONLY or f == "mem_io_buffers" or f.startswith(("io_uring_", "rss_")) for f in extra), extra
        # the shared fields in 7.4.1's order
        assert [f for f in ours if f in refs] == [f for f in refs if f in ours], name
    version = server.client().info("server")
    assert version["redis_version"] == "7.4.1"
    assert version["redis_like_version"]
    assert version["listener0"] == {"name": "tcp", "bind": "127.0.0.1", "port": server.port}


def memory_stats_keys(c):
    """MEMORY STATS's field names in order, the db.<n> maps' inner names
    after theirs."""
    c.response_callbacks.clear()
    reply = c.execute_command("MEMORY", "STATS")
    if isinstance(reply, dict):
        reply = [x for kv in reply.items() for x in kv]
    keys = []
    for name, value in zip(reply[0::2], reply[1::2]):
        name = name.decode() if isinstance(name, bytes) else name
        keys.append(name)
        if isinstance(value, list):
            keys += [name + "/" + (v.decode() if isinstance(v, bytes) else v) for v in value[0::2]]
    return keys


def test_memory_stats_fields_are_74s(server, ref):
    """7.4.1's MEMORY STATS fields, in its order; ours (io.buffers and the
    rss.* breakdown) come after them."""
    c = server.client()
    c.flushall()
    c.set("k", "v")
    mine = memory_stats_keys(c)

    def live():
        r = ref.server.client()
        r.flushall()
        r.set("k", "v")
        return memory_stats_keys(r)
    theirs = ref.reply(["memory stats keys"], live)
    assert mine[:len(theirs)] == theirs
    assert all(k == "io.buffers" or k.startswith("rss.") for k in mine[len(theirs):]), mine


def test_rehashing_overhead_is_reported_while_a_table_resizes(server):
    """mem_overhead_db_hashtable_rehashing (INFO, 7.4) and MEMORY STATS's
    overhead.db.hashtable.rehashing and db.dict.rehashing.count: the array a
    resize empties, seen from inside a transaction (no cron step finishes
    the resize meanwhile); 0 once the resize is over."""
    c = server.client()
    c.flushall()
    c.execute_command("DEBUG", "POPULATE", "3000", "pre")
    p = c.pipeline(transaction=True)
    for i in range(3000):
        p.set("k%d" % i, "v")
        if i % 50 == 0:
            p.execute_command("MEMORY", "STATS")
            p.execute_command("INFO", "memory")
    out = p.execute()
    stats = [parse_memory_stats(x) for x in out if isinstance(x, list)]
    infos = [x for x in out if isinstance(x, dict) and "used_memory" in x]
    seen = [(s["overhead.db.hashtable.rehashing"], s["db.dict.rehashing.count"], i["mem_overhead_db_hashtable_rehashing"])
            for s, i in zip(stats, infos)]
    busy = [t for t in seen if t[1] > 0]
    assert busy, seen                      # 3000 -> 6000 keys: the table grew at least once
    assert all(r > 0 and r == info_r for r, _, info_r in busy), busy
    assert all(r == 0 for r, n, _ in seen if n == 0), seen
    assert all(s["overhead.db.hashtable.lut"] >= s["overhead.db.hashtable.rehashing"] for s in stats)
    deadline = time.time() + 10            # the cron finishes the resize
    while c.info("memory")["mem_overhead_db_hashtable_rehashing"] and time.time() < deadline:
        time.sleep(0.05)
    assert c.info("memory")["mem_overhead_db_hashtable_rehashing"] == 0
    assert memory_stats(c)["db.dict.rehashing.count"] == 0


def info_counts(c):
    i = c.info("clients")
    return [i[k] for k in ("pubsub_clients", "watching_clients", "total_watched_keys", "total_blocking_keys",
                           "total_blocking_keys_on_nokey")]


def test_info_client_counts(start_server):
    s = start_server()
    c, other = s.client(), s.client()
    assert info_counts(c) == [0, 0, 0, 0, 0]
    p = other.pubsub()
    p.subscribe("ch")
    p.get_message(timeout=1)
    w = s.client()
    w.execute_command("WATCH", "a", "b")
    w2 = s.client()
    w2.execute_command("WATCH", "b")
    b1 = socket.create_connection(("127.0.0.1", s.port))
    b1.sendall(benchlib.resp("BLPOP", "l1", "l2", "0"))
    c.xgroup_create("st", "g", "$", mkstream=True)
    b2 = socket.create_connection(("127.0.0.1", s.port))
    b2.sendall(benchlib.resp("XREADGROUP", "GROUP", "g", "x", "BLOCK", "0", "STREAMS", "st", ">"))
    deadline = time.time() + 5
    while c.info("clients")["blocked_clients"] < 2 and time.time() < deadline:
        time.sleep(0.02)
    assert info_counts(c) == [1, 2, 2, 3, 1]
    b1.close()
    b2.close()
    p.close()


def test_new_key_event(server, ref):
    def events(c, sub):
        c.config_set("notify-keyspace-events", "En")
        p = sub.pubsub()
        p.psubscribe("__keyevent@*")
        p.get_message(timeout=1)
        for cmd in (["SET", "a", "1"], ["SET", "a", "2"], ["HSET", "h", "f", "v"], ["LPUSH", "l", "x"],
                    ["INCR", "n"], ["DEL", "a"], ["SET", "a", "3"], ["COPY", "a", "b"], ["RENAME", "b", "c"]):
            c.execute_command(*cmd)
        got = []
        deadline = time.time() + 2
        while time.time() < deadline and len(got) < 7:
            m = p.get_message(timeout=0.2)
            if m and m["type"] == "pmessage":
                got.append([m["channel"], m["data"]])
        p.close()
        c.config_set("notify-keyspace-events", "")
        return got

    c = server.client(decode_responses=True)
    c.flushall()
    mine = events(c, server.client(decode_responses=True))

    def live():
        rc = ref.server.client(decode_responses=True)
        rc.flushall()
        return events(rc, ref.server.client(decode_responses=True))
    assert mine == ref.reply(["events new"], live)
    assert mine[0] == ["__keyevent@0__:new", "a"]


# ------------------------------------------------------------- WAITAOF

WAITAOF_LOCAL = [
    ["CONFIG", "SET", "appendfsync", "always"], ["INCR", "foo"], ["WAITAOF", "1", "0", "0"],
    ["CONFIG", "SET", "appendfsync", "no"], ["INCR", "foo"], ["WAITAOF", "1", "0", "50"],
    ["CONFIG", "SET", "appendfsync", "everysec"], ["INCR", "foo"], ["WAITAOF", "1", "0", "0"],
    ["WAITAOF", "0", "1", "50"], ["WAITAOF", "1", "1", "50"], ["WAIT", "1", "50"],
    ["CONFIG", "SET", "appendonly", "no"], ["WAITAOF", "1", "0", "0"], ["WAITAOF", "0", "0", "0"],
]


def test_waitaof_local_is_74s(start_server):
    s = start_server(["--appendonly", "yes"])
    c = s.client(decode_responses=False)
    ref = Ref74("r74_waitaof", ["--appendonly", "yes"])
    try:
        theirs = ref.reply(["waitaof local"], lambda: run(ref.server.client(decode_responses=False), WAITAOF_LOCAL))
        # A client that wrote nothing waits for nothing, whatever others
        # wrote (each client waits for its own last write).
        fresh = ref.reply(["waitaof fresh client"], lambda: fresh_client_waitaof(ref.server))
    finally:
        ref.stop()
    assert run(c, WAITAOF_LOCAL) == theirs
    assert theirs[2] == [1, 0] and theirs[5] == [0, 0]
    assert fresh_client_waitaof(s) == fresh == [[0, 0], [1, 0]]


def fresh_client_waitaof(srv):
    writer, idle = srv.client(), srv.client()
    writer.config_set("appendonly", "yes")
    writer.config_set("appendfsync", "no")
    deadline = time.time() + 10
    while writer.info("persistence")["aof_rewrite_in_progress"] or \
            writer.info("persistence")["aof_rewrite_scheduled"]:
        assert time.time() < deadline
        time.sleep(0.05)
    writer.incr("fresh")
    out = [writer.execute_command("WAITAOF", "1", "0", "50"), idle.execute_command("WAITAOF", "1", "0", "0")]
    writer.config_set("appendfsync", "everysec")
    return out


def test_waitaof_blocked_then_appendonly_off(start_server):
    s = start_server(["--appendonly", "yes", "--appendfsync", "no"])
    c = s.client()
    sock = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    sock.sendall(benchlib.resp("INCR", "x") + benchlib.resp("WAITAOF", "1", "0", "0"))
    deadline = time.time() + 5
    while not any(x["cmd"] == "waitaof" for x in c.client_list()) and time.time() < deadline:
        time.sleep(0.02)
    c.config_set("appendonly", "no")
    data = b""
    while data.count(b"\r\n") < 2:
        data += sock.recv(4096)
    assert data == b":1\r\n-ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.\r\n"
    sock.close()


def wait_up(c):
    deadline = time.time() + 15
    while c.info("replication").get("master_link_status") != "up" and time.time() < deadline:
        time.sleep(0.05)
    assert c.info("replication")["master_link_status"] == "up"


def waitaof_with(master, replica_args, start):
    """[local, replicas] of a write's WAITAOF 1 1 on master once a replica
    started by start(replica_args) is up."""
    rep = start(replica_args + ["--replicaof", "127.0.0.1", str(master.port)])
    wait_up(rep.client())
    mc = master.client()
    mc.incr("w")
    return mc.execute_command("WAITAOF", "1", "1", "3000"), rep


def test_waitaof_counts_replicas_that_fsynced(start_server):
    m = start_server(["--appendonly", "yes", "--appendfsync", "always", "--repl-diskless-sync-delay", "0"])
    got, rep = waitaof_with(m, ["--appendonly", "yes", "--appendfsync", "always"], start_server)
    assert got == [1, 1]
    rep.stop()
    got, rep = waitaof_with(m, ["--appendonly", "no"], start_server)
    assert got == [1, 0]  # a replica without AOF sends no FACK: timed out
    # WAITAOF on a replica, and a blocked one when its master turns replica
    with pytest.raises(redis.ResponseError, match="WAITAOF cannot be used with replica instances"):
        rep.client().execute_command("WAITAOF", "0", "0", "0")
    socks = []
    for wait in (("WAITAOF", "0", "1", "0"), ("WAIT", "2", "0")):
        sock = socket.create_connection(("127.0.0.1", m.port), timeout=5)
        sock.sendall(benchlib.resp("INCR", "w") + benchlib.resp(*wait))
        socks.append(sock)
    time.sleep(0.3)
    m.client().replicaof("127.0.0.1", rep.port)
    for sock in socks:  # refused and closed, as 7.0 and 7.4 do with every blocked client
        data = b""
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
        assert data.split(b"\r\n")[1] == \
            b"-UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)"
        sock.close()


def test_waitaof_with_a_74_peer_both_ways(start_server):
    """Our master counts a 7.4.1 replica's FACK, a 7.4.1 master ours.
    Without a 7.4.1 (CI) the same runs with our own server as the peer, so
    the FACK protocol is still checked end to end."""
    path = ref74_binary()
    started = []

    def start74(args):
        if not path:
            return start_server(args)
        s = benchlib.Server(path, ["--save", ""] + args, timeout=30, wait="any", prefix="rl-test74-")
        started.append(s)
        return s
    try:
        m = start_server(["--appendonly", "yes", "--appendfsync", "always", "--repl-diskless-sync-delay", "0"])
        got, _ = waitaof_with(m, ["--appendonly", "yes", "--appendfsync", "always"], start74)
        assert got == [1, 1]
        m74 = start74(["--appendonly", "yes", "--appendfsync", "always", "--repl-diskless-sync-delay", "0"])
        got, _ = waitaof_with(m74, ["--appendonly", "yes", "--appendfsync", "always"], start_server)
        assert got == [1, 1]
    finally:
        for s in started:
            s.stop()


def test_client_kill_maxage_kills_only_older_clients(start_server):
    s = start_server()
    old = socket.create_connection(("127.0.0.1", s.port), timeout=5)
    old.sendall(benchlib.resp("PING"))
    assert old.recv(100) == b"+PONG\r\n"
    time.sleep(2.1)
    c = s.client()
    c.ping()
    assert c.execute_command("CLIENT", "KILL", "MAXAGE", "100") == 0
    assert c.execute_command("CLIENT", "KILL", "MAXAGE", "2") == 1
    assert old.recv(100) == b""
    assert c.ping()
    old.close()


# ------------------------------------------------- DUMP/RESTORE with 7.4.1

def fill_types(c):
    c.hset("h", mapping={"a": 1, "b": 2})
    c.execute_command("HPEXPIREAT", "h", sc.FAR, "FIELDS", 1, "a")
    c.hset("H", mapping={"f%d" % i: i for i in range(300)})
    c.execute_command("HPEXPIREAT", "H", sc.FAR, "FIELDS", 1, "f3")
    c.set("s", "v")
    c.rpush("l", "a", "b")
    c.sadd("st", "x")
    c.zadd("z", {"m": 1})
    c.xadd("x", {"a": "b"}, id="1-1")
    c.xgroup_create("x", "g", "0")
    c.xreadgroup("g", "c", {"x": ">"})


DUMP_KEYS = ["h", "H", "s", "l", "st", "z", "x"]


def state(c, k):
    t = c.type(k)
    if t == b"hash":
        return t, sorted(c.hgetall(k).items()), c.execute_command("HPEXPIRETIME", k, "FIELDS", 2, "a", "f3")
    if t == b"stream":
        return t, c.xrange(k), c.xpending(k, "g")["pending"]
    read = {b"string": ["GET", k], b"list": ["LRANGE", k, 0, -1], b"set": ["SMEMBERS", k],
            b"zset": ["ZRANGE", k, 0, -1, "WITHSCORES"]}[t]
    return t, c.execute_command(*read)


def test_dump_payloads_restore_both_ways(server, ref):
    """7.4.1's DUMP payloads (hash field TTLs: RDB 12) RESTORE here with
    the same value; with a live 7.4.1 ours RESTORE there too."""
    c = server.client(decode_responses=False)
    c.flushall()
    fill_types(c)

    def live_dumps():
        rc = ref.server.client(decode_responses=False)
        rc.flushall()
        fill_types(rc)
        return {k: rc.dump(k).hex() for k in DUMP_KEYS}
    theirs = ref.reply(["dumps"], live_dumps)
    for k in DUMP_KEYS:
        c.restore("r_" + k, 0, bytes.fromhex(theirs[k]), replace=True)
        assert state(c, "r_" + k) == state(c, k), k
    if ref.live:
        rc = ref.server.client(decode_responses=False)
        for k in DUMP_KEYS:
            rc.restore("r_" + k, 0, c.dump(k), replace=True)
            assert state(rc, "r_" + k) == state(c, k), k


def test_waitaof_for_a_write_that_reached_the_replica_by_its_full_sync(start_server):
    """The write is in the RDB the replica loads, not in its stream: the
    replica's FACK covers it only once the AOF rewrite after the sync has
    installed its base (held back here by rdb-key-save-delay), not as soon
    as the stream bytes after it are fsynced."""
    m = start_server(["--appendonly", "yes", "--appendfsync", "always", "--repl-diskless-sync-delay", "0"])
    mc = m.client()
    mc.incr("before")
    rep = start_server(["--appendonly", "yes", "--appendfsync", "always", "--rdb-key-save-delay", "1500000",
                        "--replicaof", "127.0.0.1", str(m.port)])
    rc = rep.client()
    wait_up(rc)
    assert mc.execute_command("WAITAOF", "1", "1", "300") == [1, 0]  # its rewrite is still writing the base
    rc.config_set("rdb-key-save-delay", 0)
    t0 = time.time()
    assert mc.execute_command("WAITAOF", "1", "1", "5000") == [1, 1]
    assert time.time() - t0 < 4
