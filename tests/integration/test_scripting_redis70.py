"""Scripts as Redis 7.0.15 runs them, compared with redis-server
(differential): an error a script's call meets is counted once in
errorstats (when met, even if pcall swallows it) and the refused command
in its rejected_calls; verbatim replies go both ways through Lua; SORT BY
a constant is sorted inside a script; the clock stands still while a
script runs (a key with a 1 ms TTL set by the script outlives its DEBUG
SLEEP); redis.set_repl sends commands to the AOF only or to the replicas
only; unpack of 7,999 arguments reaches redis.call; a write after the
script's first one is not refused when the server's state changed; and
the debugger's `redis` command with 100 arguments (it overflowed Lua's
stack) answers as Redis does."""
import socket

import pytest
import redis

from conftest import REDIS_SERVER, SERVER
from repl_helpers import wait_for

pytestmark = pytest.mark.differential

BOTH = pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])

CASES = [
    (1, "return redis.call('set','x','y')"),
    (1, "local t = redis.pcall('set','x','y') return 1"),
    (0, "return redis.call('incr','s')"),
    (0, "local t = redis.pcall('incr','s') return 1"),
    (0, "return redis.error_reply('MY err')"),
    (0, "return redis.call('nosuch')"),
    (0, "return redis.call('get')"),
    (0, "local t = redis.pcall('get') return t['ignore_error_stats_update']"),
]


def error_figures(port):
    c = redis.Redis(port=port, decode_responses=True)
    out = []
    for maxmemory, script in CASES:
        c.config_set("maxmemory", 0)
        c.set("s", "abc")
        c.config_set("maxmemory", maxmemory)
        c.config_resetstat()
        try:
            reply = c.eval(script, 1, "x")
        except redis.ResponseError as e:
            reply = "error: " + str(e).split(" script:")[0]
        c.config_set("maxmemory", 0)
        stats = c.info("commandstats")
        out.append((reply, c.info("errorstats"), c.info("stats")["total_error_replies"],
                    {k: (v["calls"], v["rejected_calls"], v["failed_calls"]) for k, v in stats.items()
                     if k in ("cmdstat_set", "cmdstat_eval", "cmdstat_incr", "cmdstat_get")}))
    return out


def test_errors_met_by_scripts_are_counted_once(server, redis_ref):
    ours = error_figures(server.port)
    assert ours == error_figures(redis_ref.port)
    assert ours[1][1] == {"errorstat_OOM": "count=1"}  # swallowed by pcall, counted all the same


def raw(port, *cmds):
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(0.3)
    out = []
    for cmd in cmds:
        s.sendall(("*%d\r\n" % len(cmd) + "".join("$%d\r\n%s\r\n" % (len(str(a)), a) for a in cmd)).encode())
        data = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        except socket.timeout:
            pass
        out.append(data)
    s.close()
    return out


def test_verbatim_replies_through_lua(start_server):
    results = []
    for binary in (SERVER, REDIS_SERVER):
        s = start_server(args=["--enable-debug-command", "yes"], binary=binary)
        got = []
        for proto in (2, 3):
            for lua_resp in (2, 3):
                got.append(raw(s.port, ("HELLO", proto), ("DEBUG", "set-disable-deny-scripts", 1),
                               ("EVAL", "redis.setresp(%d) return redis.call('debug', 'protocol', 'verbatim')"
                                % lua_resp, 0))[2])
        results.append(got)
    assert results[0] == results[1]
    assert results[0][3] == b"=29\r\ntxt:This is a verbatim\nstring\r\n"


@BOTH
def test_sort_by_constant_is_sorted_in_scripts(start_server, binary):
    c = start_server(binary=binary).client()
    c.sadd("myset", *"a b c d e f g h i l m n o p q r s t u v z aa aaa azz".split())
    assert c.eval("return redis.call('sort', KEYS[1], 'by', '_')", 1, "myset") == \
        "a aa aaa azz b c d e f g h i l m n o p q r s t u v z".split()
    assert c.eval("return redis.call('sort', KEYS[1], 'by', '_', 'get', '#', 'get', '_:*')", 1, "myset")[:4] == \
        ["a", None, "aa", None]


@BOTH
def test_time_stands_still_in_a_script(start_server, binary):
    c = start_server(args=["--enable-debug-command", "yes"] if binary == REDIS_SERVER else [], binary=binary).client()
    c.execute_command("DEBUG", "set-disable-deny-scripts", 1)
    assert c.eval("redis.call('SET', 'key', 'value', 'PX', '1') redis.call('DEBUG', 'SLEEP', 0.01) "
                  "return redis.call('EXISTS', 'key')", 0) == 1
    wait_for(lambda: c.exists("key") == 0, timeout=5)


@BOTH
def test_set_repl_targets(start_server, binary):
    args = ["--appendonly", "yes"] + (["--enable-debug-command", "yes"] if binary == REDIS_SERVER else [])
    master = start_server(args=args, binary=binary)
    replica = start_server(binary=binary)
    m, r = master.client(), replica.client()
    r.execute_command("REPLICAOF", "127.0.0.1", master.port)
    wait_for(lambda: r.info("replication")["master_link_status"] == "up", timeout=20)
    m.eval("redis.call('set','a','1') redis.set_repl(redis.REPL_NONE) redis.call('set','b','2') "
           "redis.set_repl(redis.REPL_AOF) redis.call('set','c','3') redis.set_repl(redis.REPL_REPLICA) "
           "redis.call('set','e','5') redis.set_repl(redis.REPL_ALL) redis.call('set','d','4')", 0)
    wait_for(lambda: r.mget("a", "b", "c", "d", "e") == ["1", None, None, "4", "5"], timeout=10)
    assert m.mget("a", "b", "c", "d", "e") == ["1", "2", "3", "4", "5"]
    assert m.execute_command("DEBUG", "LOADAOF") == "OK"
    assert m.mget("a", "b", "c", "d", "e") == ["1", None, "3", "4", None]


@BOTH
def test_unpack_of_many_arguments(start_server, binary):
    c = start_server(binary=binary).client()
    assert c.eval("local a = {} for i=1,7999 do a[i] = 1 end return redis.call('lpush', 'l', unpack(a))", 0) == 7999


@BOTH
def test_writes_after_the_first_are_not_refused_by_a_state_change(start_server, binary):
    s = start_server(args=["--enable-debug-command", "yes"] if binary == REDIS_SERVER else [], binary=binary)
    c = s.client()
    c.execute_command("DEBUG", "set-disable-deny-scripts", 1)
    # the first write passes; min-replicas then refuses writes, but the
    # script has written already: its second write must not fail half-way
    assert c.eval("redis.call('set','x','1') redis.call('config','set','min-replicas-to-write','1') "
                  "redis.call('set','y','2') return 1", 0) == 1
    assert c.mget("x", "y") == ["1", "2"]
    with pytest.raises(redis.ResponseError, match="NOREPLICAS"):
        c.eval("return redis.call('set','z','3')", 0)


@BOTH
def test_debugger_redis_command_with_many_arguments(start_server, binary):
    s = start_server(binary=binary)
    conn = socket.create_connection(("127.0.0.1", s.port))
    conn.settimeout(2)

    def send(payload):
        conn.sendall(payload)

    send(b"*3\r\n$6\r\nSCRIPT\r\n$5\r\nDEBUG\r\n$4\r\nSYNC\r\n")
    assert conn.recv(100).startswith(b"+OK")
    send(b"*3\r\n$4\r\nEVAL\r\n$14\r\nreturn 'hello'\r\n$1\r\n0\r\n")
    data = b""
    while b"return 'hello'" not in data:
        data += conn.recv(65536)
    send(b"*101\r\n$5\r\nredis\r\n" + b"$4\r\ntest\r\n" * 100)
    data = b""
    while b"\r\n" not in data or data.count(b"\r\n") < 2:
        data += conn.recv(65536)
    assert b"Unknown Redis command called from script" in data
    conn.close()
    assert s.client().ping()
