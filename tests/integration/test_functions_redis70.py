"""Function libraries as Redis 7.0.15 handles them, each case on our server
and on redis-server (differential): the metadata line's errors, what a
library's code sees while it loads (only redis.register_function, log, the
LOG_* levels and the version: math, string, redis.call, redis.setresp are
nonexistent globals there), FUNCTION RESTORE all or nothing, FUNCTION FLUSH
and SCRIPT FLUSH under a tiny maxmemory (a new Lua state used to fail to
build there: the server crashed), the allow-stale flag on a replica whose
link is down, DEBUG RELOAD NOFLUSH/MERGE and DEBUG LOADAOF with libraries."""

import pytest
import redis

from conftest import REDIS_SERVER, SERVER
from repl_helpers import closed_loopback_port

pytestmark = pytest.mark.differential

BOTH = pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])


def load_error(c, code):
    with pytest.raises(redis.ResponseError) as e:
        c.function_load(code, replace=True)
    return str(e.value)


@pytest.fixture(scope="module")
def pair():
    from conftest import ServerProcess
    ours, ref = ServerProcess(SERVER), ServerProcess(REDIS_SERVER)
    yield ours.client(), ref.client()
    ours.stop()
    ref.stop()


@pytest.mark.parametrize("code", [
    "#! name=test\nredis.register_function('foo', function() return 1 end)",
    "#!lua name=test foo=bar\nredis.register_function('foo', function() return 1 end)",
    "#!lua\nredis.register_function('foo', function() return 1 end)",
    "#!lua name=foo name=bar\nredis.register_function('foo', function() return 1 end)",
    "#!lua NAME=a-b\nredis.register_function('foo', function() return 1 end)",
    "#!nosuch name=x\nredis.register_function('foo', function() return 1 end)",
    "#!lua name=nobody",
    "no shebang",
], ids=["empty-engine", "unknown-meta", "no-name", "two-names", "bad-name", "unknown-engine", "no-newline",
        "no-shebang"])
def test_metadata_errors(pair, code):
    ours, ref = pair
    assert load_error(ours, code) == load_error(ref, code)


@pytest.mark.parametrize("body", [
    "return math.random()",
    "return string.format('%d', 1)",
    "return redis.call('ping')",
    "return redis.setresp(3)",
    "return redis.set_repl(redis.REPL_NONE)",
    "redis.register_function{function_name='f1', callback=function() return 1 end, description=function() end}",
    "local v = redis.REDIS_VERSION_NUM + #redis.REDIS_VERSION redis.log(redis.LOG_NOTICE, 'x') return nil",
], ids=["math", "string", "call", "setresp", "set_repl", "bad-description", "allowed"])
def test_what_a_library_sees_while_it_loads(pair, body):
    ours, ref = pair
    code = "#!lua name=lib2\n" + body
    assert load_error(ours, code) == load_error(ref, code)


LIB1 = "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)\n" \
       "redis.register_function('f3', function() return 3 end)"
LIB2 = "#!lua name=lib2\nredis.register_function('f3', function() return 33 end)\n" \
       "redis.register_function('f4', function() return 4 end)"


@BOTH
def test_restore_is_all_or_nothing(start_server, binary):
    s = start_server(binary=binary)
    c, raw = s.client(), redis.Redis(port=s.port)
    c.function_load(LIB1)
    payload = raw.function_dump()
    c.function_delete("lib1")
    c.function_load(LIB2)
    c.function_load("#!lua name=lib1\nredis.register_function('f6', function() return 6 end)")
    before = sorted(str(x) for x in c.function_list())
    # lib1 exists: nothing restored
    with pytest.raises(redis.ResponseError, match="^Library lib1 already exists$"):
        raw.function_restore(payload)
    # REPLACE takes lib1's place, but f3 belongs to lib2: nothing changes
    with pytest.raises(redis.ResponseError, match="^Function f3 already exists$"):
        raw.function_restore(payload, "REPLACE")
    assert sorted(str(x) for x in c.function_list()) == before
    assert [c.fcall(f, 0) for f in ("f3", "f4", "f6")] == [33, 4, 6]
    c.function_delete("lib2")
    assert raw.function_restore(payload, "REPLACE")
    assert [c.fcall(f, 0) for f in ("f1", "f3")] == [1, 3]
    with pytest.raises(redis.ResponseError, match="Function not found"):
        c.fcall("f6", 0)
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("FUNCTION", "FLUSH", "SYNC", "extra")
    assert str(e.value) == "unknown subcommand or wrong number of arguments for 'FLUSH'. Try FUNCTION HELP."


@BOTH
def test_flush_and_load_under_a_tiny_maxmemory(start_server, binary):
    s = start_server(binary=binary)
    c, raw = s.client(), redis.Redis(port=s.port)
    c.function_load(LIB1)
    payload = raw.function_dump()
    c.config_set("maxmemory", 1)
    assert c.function_flush() and c.script_flush()
    with pytest.raises(redis.ResponseError, match="^OOM command not allowed when used memory"):
        c.function_load(LIB1)
    with pytest.raises(redis.ResponseError, match="^OOM command not allowed when used memory"):
        raw.function_restore(payload)
    # a read-only script still runs under OOM
    assert c.eval("#!lua flags=no-writes\nreturn redis.call('get', 'nokey')", 0) is None
    c.config_set("maxmemory", 0)
    assert c.function_load(LIB1) == "lib1"



@BOTH
def test_allow_stale(start_server, binary):
    s = start_server(binary=binary)
    c = s.client()
    c.function_load("#!lua name=test\n"
                    "redis.register_function{function_name='f1', callback=function() return 'hello' end, "
                    "flags={'no-writes'}}\n"
                    "redis.register_function{function_name='f2', callback=function() return 'hello' end, "
                    "flags={'allow-stale', 'no-writes'}}\n"
                    "redis.register_function{function_name='f3', callback=function() return redis.call('get', 'x') "
                    "end, flags={'allow-stale', 'no-writes'}}\n"
                    "redis.register_function{function_name='f4', callback=function() return redis.call('info', "
                    "'server') end, flags={'allow-stale', 'no-writes'}}")
    c.config_set("replica-serve-stale-data", "no")
    c.execute_command("REPLICAOF", "127.0.0.1", closed_loopback_port())
    try:
        with pytest.raises(redis.ResponseError, match="^MASTERDOWN Link with MASTER is down and replica-serve-stale-data"):
            c.fcall("f1", 0)
        assert c.fcall("f2", 0) == "hello"
        with pytest.raises(redis.ResponseError, match="Can not execute the command on a stale replica"):
            c.fcall("f3", 0)
        assert "redis_version" in c.fcall("f4", 0)
        # EVAL without flags is refused before it runs; with allow-stale it
        # runs, and its commands not allowed on stale data fail
        with pytest.raises(redis.ResponseError, match="^MASTERDOWN Link with MASTER is down and replica-serve"):
            c.eval("return 1", 0)
        assert c.eval("#!lua flags=allow-stale,no-writes\nreturn 1", 0) == 1
        with pytest.raises(redis.ResponseError, match="Can not execute the command on a stale replica"):
            c.eval("#!lua flags=allow-stale,no-writes\nreturn redis.call('get', 'x')", 0)
    finally:
        c.execute_command("REPLICAOF", "NO", "ONE")


@BOTH
def test_debug_reload_noflush_and_merge(start_server, binary):
    s = start_server(args=["--enable-debug-command", "yes"] if binary == REDIS_SERVER else [], binary=binary)
    c = s.client()
    c.function_load(LIB1)
    c.set("x", "1")
    c.execute_command("DEBUG", "RELOAD")
    with pytest.raises(redis.ResponseError, match="^Error trying to load the RDB dump"):
        c.execute_command("DEBUG", "RELOAD", "NOFLUSH")  # lib1 is in memory and in the file
    c.function_delete("lib1")
    c.function_load(LIB1)
    c.function_load("#!lua name=lib5\nredis.register_function('f5', function() return 5 end)")
    c.set("y", "2")
    assert c.execute_command("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE") == "OK"
    assert [c.fcall(f, 0) for f in ("f1", "f5")] == [1, 5]
    assert c.mget("x", "y") == ["1", "2"]
    with pytest.raises(redis.ResponseError, match="^DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE"):
        c.execute_command("DEBUG", "RELOAD", "BOGUS")


@BOTH
def test_debug_loadaof_replays_function_commands(start_server, binary):
    args = ["--appendonly", "yes", "--propagation-error-behavior", "panic"]
    if binary == REDIS_SERVER:
        args += ["--enable-debug-command", "yes"]
    s = start_server(args=args, binary=binary)
    c = s.client()
    c.function_load(LIB1)
    assert c.execute_command("DEBUG", "LOADAOF") == "OK"
    assert c.fcall("f1", 0) == 1
    c.function_delete("lib1")
    assert c.execute_command("DEBUG", "LOADAOF") == "OK"
    assert c.function_list() == []
