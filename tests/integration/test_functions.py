"""Redis 7 Functions: FUNCTION LOAD/LIST/DELETE/FLUSH/STATS, FCALL and
FCALL_RO, flags and descriptions; the load-time sandbox; error replies
byte-identical to Debian's redis-server 7.0.15; FUNCTION DUMP payloads and
RDB files with functions moving both ways between the two servers; the AOF
logging FUNCTION LOAD (in its incr file) and a rewrite's base holding the
libraries; `redis-cli --functions-rdb` (an RDB of the libraries alone)."""
import os
import subprocess

import pytest
import redis

from conftest import REDIS_SERVER, SERVER, aof_file
from rawresp import ExactConn
from repl_helpers import wait_link_up
from test_scripting import wait_loaded

LIB = """#!lua name=mylib
local function set_it(keys, args)
  return redis.call('SET', keys[1], args[1])
end
redis.register_function('myset', set_it)
redis.register_function{function_name='myget', callback=function(keys) return redis.call('GET', keys[1]) end,
                        flags={'no-writes'}, description='read a key'}
redis.register_function('boom', function() error('boom') end)
"""

LIB2 = """#!lua name=lib2
redis.register_function('hello', function(keys, args) return 'hello ' .. (args[1] or 'world') .. ' from a library long enough for LZF' end)
"""


def test_load_call_list_delete(r):
    r.function_flush()
    assert r.function_load(LIB) == "mylib"
    assert r.fcall("myset", 1, "k", "v") == "OK"
    assert r.fcall_ro("myget", 1, "k") == "v"
    with pytest.raises(redis.exceptions.ResponseError, match="Can not execute a script with write flag"):
        r.fcall_ro("myset", 1, "k", "v")
    with pytest.raises(redis.exceptions.ResponseError, match="boom script: boom, on @user_function:8"):
        r.fcall("boom", 0)
    libs = r.function_list()
    assert len(libs) == 1
    lib = dict(zip(libs[0][::2], libs[0][1::2]))
    assert lib["library_name"] == "mylib" and lib["engine"] == "LUA"
    fns = {f[1]: dict(zip(f[::2], f[1::2])) for f in lib["functions"]}
    assert set(fns) == {"myset", "myget", "boom"}
    assert fns["myget"]["description"] == "read a key" and fns["myget"]["flags"] == ["no-writes"]
    assert fns["myset"]["description"] is None and fns["myset"]["flags"] == []
    withcode = r.function_list(withcode=True)[0]
    assert withcode[-2:] == ["library_code", LIB]
    assert r.function_list(library="my*") and r.function_list(library="other*") == []
    info = r.info("memory")
    assert info["number_of_functions"] == 3 and info["number_of_libraries"] == 1
    with pytest.raises(redis.exceptions.ResponseError, match="Library 'mylib' already exists"):
        r.function_load(LIB)
    assert r.function_load(LIB.replace("'boom'", "'boom2'"), replace=True) == "mylib"
    with pytest.raises(redis.exceptions.ResponseError, match="Function not found"):
        r.fcall("boom", 0)
    assert r.function_delete("mylib")
    with pytest.raises(redis.exceptions.ResponseError, match="Library not found"):
        r.function_delete("mylib")
    assert r.info("memory")["number_of_functions"] == 0


def test_failed_load_changes_nothing(r):
    r.function_flush()
    r.function_load(LIB)
    bad = LIB.replace("error('boom')", "error('boom')") + "\nerror('late failure')\n"
    with pytest.raises(redis.exceptions.ResponseError, match="Error registering functions"):
        r.function_load(bad, replace=True)
    assert r.fcall("myset", 1, "a", "b") == "OK"
    clash = "#!lua name=other\nredis.register_function('myset', function() return 1 end)"
    with pytest.raises(redis.exceptions.ResponseError, match="Function myset already exists"):
        r.function_load(clash)
    assert len(r.function_list()) == 1


def test_infinite_loop_at_load_times_out(r):
    with pytest.raises(redis.exceptions.ResponseError, match="FUNCTION LOAD timeout"):
        r.function_load("#!lua name=spin\nwhile true do end")
    assert r.ping()


LOAD_ERRORS = [
    "return 1",
    "#!lua\nreturn 1",
    "#!lua name=a-b\nreturn 1",
    "#!foo name=ab\nreturn 1",
    "#!lua name=ab\nreturn 1",
    "#!lua name=ab bad=1\nreturn 1",
    "#!lua name=ab\nredis.register_function{function_name='g', callback=function() end, flags={'bad'}}",
    "#!lua name=ab\nredis.register_function('bad name', function() end)",
    "#!lua name=ab\nredis.register_function('f')",
    "#!lua name=ab\nredis.register_function('f', 1)",
    "#!lua name=ab\nredis.register_function{callback=function() end}",
    "#!lua name=ab\nredis.register_function{function_name='f'}",
    "#!lua name=ab\nredis.register_function{function_name='f', callback=function() end, foo=1}",
    "#!lua name=ab\nredis.register_function{function_name='f', callback=function() end, flags='no-writes'}",
    "#!lua name=ab\nredis.register_function()",
    "#!lua name=ab\nredis.register_function{function_name={}, callback=function() end}",
    "#!lua name=ab\nredis.call('ping')",
    "#!lua name=ab\nerror('x')",
    "#!lua name=ab\nlocal a = 1 +",
    "#!lua name=ab\nx = 1",
    "#!lua name=ab\nredis.register_function('f', function() end) redis.register_function('f', function() end)",
]

CALL_ERRORS = [
    ("FCALL", "nosuch", "0"),
    ("FCALL", "myset", "-1"),
    ("FCALL", "myset", "3", "a"),
    ("FCALL", "myset", "x"),
    ("FCALL_RO", "myset", "1", "k", "v"),
    ("FCALL", "boom", "0"),
    ("FCALL", "myset", "0"),
    ("FCALL", "myget", "1", "k"),
    ("FUNCTION", "DELETE", "nolib"),
    ("FUNCTION", "RESTORE", "garbage"),
    ("FUNCTION", "RESTORE", "x", "BADPOLICY"),
    ("FUNCTION", "FLUSH", "BAD"),
    ("FUNCTION", "NOSUCH"),
    ("FUNCTION", "KILL"),
    # names are case-insensitive; every argument before the code is an option
    ("FCALL", "MYSET", "1", "k", "v"), ("FCALL_RO", "MyGet", "1", "k"), ("FUNCTION", "DELETE", "MYLIB"),
    ("FUNCTION", "LOAD", "foo", "bar", "code"), ("FUNCTION", "LOAD", "REPLACE", "REPLACE", LIB),
    ("FUNCTION", "RESTORE", "a", "b", "c"),
]


@pytest.mark.differential
@pytest.mark.parametrize("resp", [2, 3])
def test_errors_match_redis(server, redis_ref, resp):
    for case in [("FUNCTION", "LOAD", code) for code in LOAD_ERRORS] + CALL_ERRORS:
        replies = []
        for port in (server.port, redis_ref.port):
            c = ExactConn(port)
            if resp == 3:
                c.call("HELLO", "3")
            c.call("FUNCTION", "FLUSH")
            c.call("FLUSHALL")
            c.call("FUNCTION", "LOAD", LIB)
            replies.append(c.call(*case)[0])
            c.close()
        assert replies[0] == replies[1], (case, replies)


# A library whose function lists what pairs() finds in a table, and calls
# what EVAL has but functions do not.
SANDBOX_LIB = """#!lua name=sandbox
local function names(t) local r = {} for k in pairs(t) do r[#r + 1] = tostring(k) end table.sort(r) return r end
redis.register_function('names', function(keys, args)
    if args[1] == 'G' then return names(_G) end
    if args[1] == 'string' then return names(string) end
    return names(redis)
end)
redis.register_function('debugger', function() return redis.breakpoint() end)
redis.register_function('handler', function() return type(__redis__err__handler) end)
"""


@pytest.mark.differential
def test_function_sandbox_matches_redis(server, redis_ref):
    """The function engine's globals and `redis` table, listed by pairs(),
    are Redis's: no debugger calls, no EVAL error handler."""
    replies = []
    for port in (server.port, redis_ref.port):
        c = ExactConn(port)
        c.call("FUNCTION", "FLUSH")
        c.call("FUNCTION", "LOAD", SANDBOX_LIB)
        replies.append([c.call("FCALL", "names", "0", what)[0] for what in ("G", "string", "redis")] +
                       [c.call("FCALL", f, "0")[0] for f in ("debugger", "handler")])
        c.call("FUNCTION", "FLUSH")
        c.close()
    assert replies[0] == replies[1]
    assert b"breakpoint" not in replies[0][2] and b"call" in replies[0][2]


@pytest.mark.differential
def test_dump_restore_both_ways(server, redis_ref):
    ours, ref = server.client(), redis_ref.client()
    for c in (ours, ref):
        c.function_flush()
    ref.function_load(LIB2)
    payload = redis.Redis(port=redis_ref.port).function_dump()
    raw_ours = redis.Redis(port=server.port)
    assert raw_ours.function_restore(payload)
    assert ours.fcall("hello", 0, "x").startswith("hello x")
    # RESTORE names the library without quotes, as Redis 7.0 does (LOAD quotes it)
    for c in (raw_ours, redis.Redis(port=redis_ref.port)):
        with pytest.raises(redis.exceptions.ResponseError, match="^Library lib2 already exists$"):
            c.function_restore(payload)
    assert raw_ours.function_restore(payload, "REPLACE")
    ours.function_load(LIB)
    payload2 = raw_ours.function_dump()
    raw_ref = redis.Redis(port=redis_ref.port)
    assert raw_ref.function_restore(payload2, "FLUSH")
    assert ref.fcall("myset", 1, "k", "v") == "OK" and ref.fcall("hello", 0).startswith("hello world")
    # a corrupted payload is refused by both
    bad = payload2[:-1] + bytes([payload2[-1] ^ 1])
    for c in (raw_ours, raw_ref):
        with pytest.raises(redis.exceptions.ResponseError, match="DUMP payload version or checksum are wrong"):
            c.function_restore(bad)
    for c in (ours, ref):
        c.function_flush()


@pytest.mark.differential
def test_rdb_with_functions_both_ways(start_server):
    ours = start_server()
    r = ours.client()
    r.function_load(LIB)
    r.function_load(LIB2)
    r.set("data", "1")
    assert r.save()
    ref = start_server(binary=REDIS_SERVER, args=("--dir", ours.dir))
    rr = ref.client()
    wait_loaded(rr)
    assert rr.fcall("myset", 1, "k", "v") == "OK" and rr.fcall("hello", 0).startswith("hello")
    assert rr.get("data") == "1"
    rr.function_delete("mylib")
    assert rr.save()
    ref.stop()
    ours.stop()
    again = start_server(args=("--dir", ours.dir))
    r2 = again.client()
    wait_loaded(r2)
    assert [l[1] for l in r2.function_list()] == ["lib2"]
    assert r2.fcall("hello", 0).startswith("hello")
    assert r2.get("data") == "1"


def test_aof_logs_function_load(start_server):
    s = start_server(args=("--appendonly", "yes"))
    r = s.client()
    r.function_load(LIB)
    r.fcall("myset", 1, "k", "v")
    r.function_load(LIB2)
    r.function_delete("lib2")
    data = open(aof_file(s.dir, "i"), "rb").read()        # the incr file the writes went to
    assert b"FCALL" not in data.upper() and b"register_function" in data
    s.stop()
    s2 = start_server(args=("--appendonly", "yes", "--dir", s.dir))
    r2 = s2.client()
    wait_loaded(r2)
    assert r2.get("k") == "v"
    assert [l[1] for l in r2.function_list()] == ["mylib"]


def test_functions_survive_aof_rewrite(start_server):
    import time
    # a base of commands (not an RDB image), to read the rewrite's output
    s = start_server(args=("--appendonly", "yes", "--aof-use-rdb-preamble", "no"))
    r = s.client()
    r.function_load(LIB)
    r.set("k", "v")
    r.bgrewriteaof()
    deadline = time.time() + 10
    while r.info("persistence")["aof_rewrite_in_progress"] or r.info("persistence")["aof_rewrite_scheduled"]:
        assert time.time() < deadline
        time.sleep(0.05)
    time.sleep(0.2)
    data = open(aof_file(s.dir, "b"), "rb").read()
    # the rewritten base opens with the library (an incr file opens with SELECT)
    assert data.startswith(b"*3\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n") and data.count(b"register_function") == 3
    s.stop()
    s2 = start_server(args=("--appendonly", "yes", "--dir", s.dir))
    r2 = s2.client()
    wait_loaded(r2)
    assert r2.fcall("myget", 1, "k") == "v"


@pytest.mark.parametrize("binary", ["ours", "redis"])
def test_cli_functions_rdb_has_no_keys(start_server, tmp_path, binary):
    """`redis-cli --functions-rdb` (REPLCONF rdb-filter-only functions): the
    file holds the libraries and no key, from either server, and loads into
    ours; a `--rdb` after it is whole again (the filter was that sync's).
    With repl-diskless-sync no the filtered RDB still goes to the socket
    (dump.rdb stays whole)."""
    src = start_server(binary=REDIS_SERVER if binary == "redis" else SERVER,
                       args=("--repl-diskless-sync", "no"))
    c = src.client()
    c.function_load(LIB)
    for i in range(100):
        c.set("k%d" % i, "v")
    for name, opt in (("funcs.rdb", "--functions-rdb"), ("all.rdb", "--rdb")):
        d = tmp_path / name.split(".")[0]
        d.mkdir()
        done = subprocess.run(["redis-cli", "-p", str(src.port), opt, str(d / "dump.rdb")],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "Transfer finished with success" in done.stdout + done.stderr
        # the filtered RDB went to the socket; the whole one, with
        # repl-diskless-sync no, through dump.rdb
        assert os.path.exists(os.path.join(src.dir, "dump.rdb")) == (opt == "--rdb")
        loaded = start_server(args=("--dir", str(d)))
        lc = loaded.client()
        wait_loaded(lc)
        assert [l[1] for l in lc.function_list()] == ["mylib"]
        assert lc.dbsize() == (0 if opt == "--functions-rdb" else 100)
        loaded.stop()


def test_rdb_filter_errors_match_redis(server, redis_ref):
    for spec in ("keys", "functions keys", '"functions', ""):
        got = []
        for s in (server, redis_ref):
            try:
                got.append(s.client().execute_command("REPLCONF", "rdb-filter-only", spec))
            except redis.ResponseError as e:
                got.append("ERR " + str(e))
        assert got[0] == got[1], spec


def test_functions_rdb_beside_a_replica(start_server, tmp_path):
    """A filtered sync and a replica's full sync arriving together go into
    separate children: the replica gets every key, the file none."""
    m = start_server(args=("--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "1"))
    c = m.client()
    c.function_load(LIB)
    for i in range(200):
        c.set("k%d" % i, "v")
    cli = subprocess.Popen(["redis-cli", "-p", str(m.port), "--functions-rdb", str(tmp_path / "dump.rdb")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        rep = start_server(args=("--replicaof", "127.0.0.1", str(m.port)))
        rc = rep.client()
        wait_link_up(rc)
        assert rc.dbsize() == 200
        assert cli.wait(timeout=60) == 0 and "Transfer finished with success" in cli.stdout.read()
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    loaded = start_server(args=("--dir", str(tmp_path)))
    lc = loaded.client()
    wait_loaded(lc)
    assert lc.dbsize() == 0 and [l[1] for l in lc.function_list()] == ["mylib"]


@pytest.mark.differential
@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_debug_reload_keeps_the_libraries(start_server, binary):
    """DEBUG RELOAD empties the libraries with the keys before loading the
    file back (it failed on duplicates while a library was loaded)."""
    s = start_server(args=["--enable-debug-command", "yes"], binary=binary)
    c = s.client()
    c.function_load(LIB)
    c.set("k", "v")
    assert c.execute_command("DEBUG", "RELOAD") == "OK"
    assert c.fcall("myget", 1, "k") == "v"
    assert [lib[1] for lib in c.function_list()] == ["mylib"]  # [library_name, name, ...]


@pytest.mark.differential
@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_the_other_kill_gets_busy_and_monitor_shows_the_call_first(start_server, binary):
    """SCRIPT KILL while a function runs (or FUNCTION KILL while EVAL runs)
    answers the BUSY line that names the right KILL; MONITOR shows EVAL and
    FCALL before the commands they run."""
    import threading
    import time
    from rawresp import RawConn
    s = start_server(args=["--busy-reply-threshold", "10"], binary=binary)
    c = s.client()
    c.function_load("#!lua name=loop\nredis.register_function('spin', function() while true do end end)\n"
                    "redis.register_function('w', function(k) return redis.call('set', k[1], 'v') end)")
    mon = RawConn(s.port)
    assert mon.call("MONITOR") == "OK"
    c.fcall("w", 1, "fk")
    c.eval("return redis.call('set', KEYS[1], 'v')", 1, "ek")
    lines = [mon.read().lower() for _ in range(4)]
    assert ['"fcall"' in lines[0], '"set" "fk"' in lines[1], '"eval"' in lines[2], '"set" "ek"' in lines[3]] == [True] * 4
    for spin, wrong, right in ((("FCALL", "spin", "0"), "SCRIPT", "FUNCTION"),
                               (("EVAL", "while true do end", "0"), "FUNCTION", "SCRIPT")):
        t = threading.Thread(target=lambda: RawConn(s.port, timeout=20).call(*spin))
        t.start()
        k = RawConn(s.port)
        for _ in range(200):
            if k.call("PING") != "PONG":
                break
            time.sleep(0.02)
        reply = k.call(wrong, "KILL")
        assert reply[0] == "err" and reply[1] == \
            "BUSY Redis is busy running a script. You can only call %s KILL or SHUTDOWN NOSAVE." % right
        assert k.call(right, "KILL") == "OK"
        t.join(10)
