"""Differential test for Lua scripting: a corpus of EVAL scripts (every
conversion rule both ways, RESP2 and RESP3, every error path we know of,
the sandbox, the bundled libraries) runs on redis-like-server and on
Debian's redis-server 7.0.15, and the raw replies must be byte-identical.

Each case runs on a fresh connection after FLUSHALL, so a script sees the
same keyspace on both servers.  Cases whose text depends on the server
build (redis.REDIS_VERSION) are left out.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_scripting_differential.py"""
import hashlib
import sys

import pytest

from rawresp import ExactConn

pytestmark = pytest.mark.differential

# The sorted names pairs() finds in a table.
KEYS_OF = ("local r = {} for k in pairs(%s) do r[#r + 1] = tostring(k) end "
           "table.sort(r) return r")

# (script, keys, args); setup commands come from SETUP below.
CORPUS = [
    # XREAD/XREADGROUP BLOCK in a script: refused by 7.0, non-blocking since
    # 7.2; compared with 7.4.1 in test_r74_surface.py.
    # Lua -> RESP
    ("return 1", [], []),
    ("return 3.99", [], []),
    ("return -3.99", [], []),
    ("return 1e20", [], []),
    ("return 'hello'", [], []),
    ("return ''", [], []),
    ("return true", [], []),
    ("return false", [], []),
    ("return nil", [], []),
    ("return {}", [], []),
    ("return {1, 2, 3, 'a', nil, 4}", [], []),
    ("return {1, {2, {3, {'x'}}}}", [], []),
    ("return {ok='fine'}", [], []),
    ("return {ok='line\\r\\nbreak'}", [], []),
    ("return {err='My Error'}", [], []),
    ("return {err='ERR custom'}", [], []),
    ("return {err='WRONGTYPE nope'}", [], []),
    ("return {err='x\\ny'}", [], []),
    ("return {double=3.5}", [], []),
    ("return {double=1/0}", [], []),
    ("return {big_number='123456789012345678901234567890'}", [], []),
    ("return {map={a=1}}", [], []),
    ("return {set={a=true}}", [], []),
    ("return {true, false, 1}", [], []),
    ("return {1, {ok='x'}, {err='y'}}", [], []),
    ("return redis.status_reply('X')", [], []),
    ("return redis.error_reply('My Error')", [], []),
    ("return redis.error_reply('oops')", [], []),
    ("return redis.error_reply('-ERR with dash')", [], []),
    ("return redis.error_reply('-NOCODE')", [], []),
    ("return redis.sha1hex('')", [], []),
    ("return redis.sha1hex('abc')", [], []),
    ("return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #KEYS, #ARGV}", ["k1", "k2"], ["a1", "a2"]),
    ("return print", [], []),
    ("return function() end", [], []),
    # RESP -> Lua
    ("return redis.call('get', 'str')", [], []),
    ("return redis.call('get', 'nokey')", [], []),
    ("return type(redis.call('get', 'nokey'))", [], []),
    ("return redis.call('incr', 'cnt')", [], []),
    ("return redis.call('lrange', 'list', 0, -1)", [], []),
    ("return redis.call('ping')", [], []),
    ("return type(redis.call('ping'))", [], []),
    ("return redis.call('ping')['ok']", [], []),
    ("return redis.pcall('incr', 'str')", [], []),
    ("return redis.pcall('incr', 'str')['err']", [], []),
    ("return redis.call('hgetall', 'hash')", [], []),
    ("return redis.call('zrange', 'zs', 0, -1, 'withscores')", [], []),
    ("return redis.call('set', 'k', 3.1)", [], []),
    ("redis.call('set', 'k', 3.1) return redis.call('get', 'k')", [], []),
    ("redis.call('set', 'k', 10) return redis.call('get', 'k')", [], []),
    ("redis.call('set', 'k', -0.5) return redis.call('get', 'k')", [], []),
    ("return redis.call('exists', 'str', 'nokey')", [], []),
    ("return redis.call('mget', 'str', 'nokey', 'cnt')", [], []),
    ("return redis.call('type', 'list')", [], []),
    # RESP3 inside the script
    ("redis.setresp(3) return redis.call('hgetall', 'hash')", [], []),
    ("redis.setresp(3) return redis.call('get', 'nokey')", [], []),
    ("redis.setresp(3) return type(redis.call('get', 'nokey'))", [], []),
    ("redis.setresp(3) return redis.call('zscore', 'zs', 'a')", [], []),
    ("redis.setresp(3) return type(redis.call('zscore', 'zs', 'a'))", [], []),
    ("redis.setresp(3) return redis.call('smembers', 'oneset')", [], []),
    ("redis.setresp(3) return true", [], []),
    ("redis.setresp(3) return false", [], []),
    ("redis.setresp(3) return {map={x='y'}}", [], []),
    ("redis.setresp(3) return redis.call('ping')", [], []),
    # errors
    ("error('boom')", [], []),
    ("error({err='table error'})", [], []),
    ("error()", [], []),
    ("return a", [], []),
    ("a = 1", [], []),
    ("function foo() return 1 end return foo()", [], []),
    ("redis.call = nil", [], []),
    ("string.upper = nil", [], []),
    ("return redis.call('nosuch')", [], []),
    ("return redis.call()", [], []),
    ("return redis.call('get', {})", [], []),
    ("return redis.call('get')", [], []),
    ("return redis.call('eval', 'return 1', 0)", [], []),
    ("return redis.call('subscribe', 'ch')", [], []),
    ("return redis.call('multi')", [], []),
    ("return redis.call('debug', 'sleep', '0')", [], []),
    ("return redis.call('monitor')", [], []),
    ("return redis.call('config')", [], []),
    ("return redis.call('config', 'nosuch')", [], []),
    ("return redis.call('object', 'encoding', 'str')", [], []),
    ("return redis.call('flushall')", [], []),
    ("return redis.call('incr', 'str')", [], []),
    ("return redis.pcall('nosuch')", [], []),
    ("return redis.setresp(4)", [], []),
    ("return 1 +", [], []),
    ("local x = nil; return x.y", [], []),
    ("return #nil", [], []),
    ("return os.time()", [], []),
    ("return loadfile", [], []),
    ("return dofile", [], []),
    ("return require", [], []),
    ("return io", [], []),
    ("local t = {} for i=1,10000 do t = {t} end return t", [], []),
    ("return pcall(function() error({err='x'}) end)", [], []),
    ("local ok, e = pcall(function() redis.call('nosuch') end) return e['err']", [], []),
    ("local f, e = loadstring(string.dump(function() return 1 end)) return {type(f), e}", [], []),
    ("return loadstring('return 1+1')()", [], []),
    ("return redis.log(redis.LOG_WARNING, 'from a script')", [], []),
    ("return redis.log()", [], []),
    ("return redis.replicate_commands()", [], []),
    ("return redis.breakpoint()", [], []),
    ("return redis.set_repl(redis.REPL_ALL)", [], []),
    ("return redis.set_repl(99)", [], []),
    ("return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING}", [], []),
    ("return {redis.REPL_NONE, redis.REPL_AOF, redis.REPL_REPLICA, redis.REPL_SLAVE, redis.REPL_ALL}", [], []),
    # libraries
    ("return cjson.encode({1, 2, {a=1}})", [], []),
    ("return cjson.encode({})", [], []),
    ("return cjson.decode('[1,2,{\"a\":[true,null]}]')[3]['a'][1]", [], []),
    ("return tostring(cjson.decode('12345678901234567890'))", [], []),
    ("return cjson.decode('{bad')", [], []),
    ("return cmsgpack.pack({1, 2, 3})", [], []),
    ("return cmsgpack.pack({a=1})", [], []),
    ("return cmsgpack.pack(1.5, -1, -33, 300, 70000, 5000000000, 'abc', true, nil)", [], []),
    ("return cmsgpack.pack(string.rep('x', 40))", [], []),
    ("return cmsgpack.pack(0.1)", [], []),
    ("return cmsgpack.pack({1, 2, nil, 4})", [], []),
    ("local t = {} for i=1,20 do t = {t} end return #cmsgpack.pack(t)", [], []),
    ("return {cmsgpack.unpack(cmsgpack.pack(1, 'two', {3}))}", [], []),
    ("return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 0)}", [], []),
    ("return bit.band(0xff, 0x0f)", [], []),
    ("return bit.tohex(65535)", [], []),
    ("return {bit.lshift(1, 10), bit.bxor(5, 3), bit.bnot(0)}", [], []),
    ("return struct.pack('>i2<I4bBhHlLc3s', 1, 2, -3, 250, -5, 6, 7, 8, 'abc', 'zz')", [], []),
    ("return struct.pack('!4bi', 1, 2)", [], []),
    ("return struct.pack('d f', 1.5, 2.5)", [], []),
    ("return {struct.unpack('>i2b', struct.pack('>i2b', 513, -2))}", [], []),
    ("return struct.size('>i2bd')", [], []),
    ("return string.format('%5.2f', 3.14159)", [], []),
    ("return table.concat({1, 2, 3}, ',')", [], []),
    ("return math.floor(3.7)", [], []),
    ("math.randomseed(7) return {math.random(100), math.random(5, 10)}", [], []),
    ("return tostring(tonumber('0x10'))", [], []),
    ("return type(_G)", [], []),
    ("return _VERSION", [], []),
    ("return getmetatable('').__index", [], []),
    # pairs() and next() over the read-only library tables list their fields
    (KEYS_OF % "redis", [], []),
    (KEYS_OF % "string", [], []),
    (KEYS_OF % "table", [], []),
    (KEYS_OF % "math", [], []),
    (KEYS_OF % "cjson", [], []),
    (KEYS_OF % "bit", [], []),
    (KEYS_OF % "struct", [], []),
    (KEYS_OF % "cmsgpack", [], []),
    (KEYS_OF % "_G", [], []),
    (KEYS_OF % "getmetatable('')", [], []),
    ("return {next(redis) ~= nil, next({}), cmsgpack._NAME, cmsgpack._DESCRIPTION}", [], []),
    ("local n = 0 for _ in pairs(ARGV) do n = n + 1 end return n", [], ["a", "b"]),
    ("for k in pairs(redis) do redis[k] = 1 end", [], []),
    ("return next(string, 'no-such-field')", [], []),
    # shebang
    ("#!lua\nreturn 1", [], []),
    ("#!lua\nerror('x')", [], []),
    ("#!lua flags=no-writes\nreturn redis.call('get', 'str')", [], []),
    ("#!lua flags=no-writes\nreturn redis.call('set', 'a', 'b')", [], []),
    ("#!lua flags=bad\nreturn 1", [], []),
    ("#!lua foo=bar\nreturn 1", [], []),
    ("#!python\nreturn 1", [], []),
    ("#!lua", [], []),
    ("#!lua flags=allow-oom,no-writes\nreturn 2", [], []),
]

SETUP = [("set", "str", "hello"), ("set", "cnt", "10"), ("rpush", "list", "a", "b", "c"),
         ("hset", "hash", "f", "v"), ("zadd", "zs", "1.5", "a", "2", "b"), ("sadd", "oneset", "m")]


# The deep-nesting case is read recursively by rawresp.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 60000))


def run_case(port, resp, script, keys, args):
    c = ExactConn(port)
    try:
        if resp == 3:
            c.call("HELLO", "3")
        c.call("FLUSHALL")
        for cmd in SETUP:
            c.call(*cmd)
        raw, _ = c.call("EVAL", script, len(keys), *keys, *args)
        # and the same through EVALSHA once the script is cached (a failed compile is not)
        raw_sha, _ = c.call("EVALSHA", hashlib.sha1(script.encode()).hexdigest(), len(keys), *keys, *args)
        return raw, raw_sha
    finally:
        c.close()


@pytest.mark.parametrize("resp", [2, 3])
def test_corpus_matches_redis(server, redis_ref, resp):
    mismatches = []
    for script, keys, args in CORPUS:
        ours = run_case(server.port, resp, script, keys, args)
        ref = run_case(redis_ref.port, resp, script, keys, args)
        if ours != ref:
            mismatches.append((script, ours, ref))
    assert not mismatches, "\n".join("%r:\n  ours %r\n  redis %r" % m for m in mismatches[:20])


ARGUMENT_ERRORS = [
    ("EVAL", "return 1", "-1"),
    ("EVAL", "return 1", "5", "a"),
    ("EVAL", "return 1", "x"),
    ("EVALSHA", "0" * 40, "0"),
    ("EVALSHA", "nosuch", "0"),
    ("EVAL_RO", "return redis.call('set', 'a', 'b')", "0"),
    ("EVAL_RO", "#!lua\nreturn 1", "0"),
    ("EVAL_RO", "#!lua flags=no-writes\nreturn 1", "0"),
    ("EVAL_RO", "return redis.call('get', 'a')", "0"),
    ("SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "x"),
    ("SCRIPT", "LOAD", "return 1"),
    ("SCRIPT", "LOAD", "return 1 +"),
    ("SCRIPT", "FLUSH", "BAD"),
    ("SCRIPT", "KILL"),
    ("SCRIPT", "NOSUCH"),
    ("EVAL",),
]


@pytest.mark.parametrize("resp", [2, 3])
def test_command_errors_match_redis(server, redis_ref, resp):
    for cmd in ARGUMENT_ERRORS:
        replies = []
        for port in (server.port, redis_ref.port):
            c = ExactConn(port)
            if resp == 3:
                c.call("HELLO", "3")
            c.call("SCRIPT", "FLUSH")
            replies.append(c.call(*cmd)[0])
            c.close()
        assert replies[0] == replies[1], (cmd, replies)
