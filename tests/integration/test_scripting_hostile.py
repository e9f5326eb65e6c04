"""Hostile scripts: the server answers an error and stays up for deep
recursion (Lua and C stacks), self-referencing and deeply nested tables,
huge tables and string.rep of gigabytes under maxmemory (the Lua heap is
bounded by it: "not enough memory", not an abort), malformed and deeply
nested JSON and MessagePack, random bytes to every decoder, and scripts
that try to escape the sandbox.  (Infinite loops: test_scripting_busy.py.)
Run under ASan too: make SANITIZER=address, RL_SERVER=..."""
import random

import pytest
import redis

from rawresp import RawConn


def err(r, script, *args):
    with pytest.raises(redis.exceptions.ResponseError) as e:
        r.eval(script, 0, *args)
    assert r.ping()
    return str(e.value)


def test_deep_lua_recursion(r):
    assert "stack overflow" in err(r, "local function f(n) return f(n + 1) + 1 end return f(1)")


def test_deep_c_recursion(r):
    # every level goes through a C function (gsub): Lua's C-call limit stops it
    msg = err(r, "local function f(s) return (s:gsub('.', f)) end return f('x')")
    assert "stack overflow" in msg


def test_self_referencing_and_deep_tables(server, r):
    # a table containing itself: the reply nests arrays until Lua's stack
    # limit, where the innermost element is the error (as Redis replies)
    c = RawConn(server.port, timeout=10)
    c.send("EVAL", "local t = {} t[1] = t return t", "0")
    data = b""
    while not data.endswith(b"-ERR reached lua stack limit\r\n"):
        chunk = c.sock.recv(65536)
        assert chunk, data[-100:]
        data += chunk
    assert data.startswith(b"*1\r\n*1\r\n") and 1000 < data.count(b"*1\r\n") < 10000
    c.close()
    assert r.ping()
    assert "excessive nesting" in err(r, "local t = {} t[1] = t return cjson.encode(t)")
    # cmsgpack encodes nesting past 16 levels as nil, so this terminates
    assert r.eval("local t = {} t[1] = t return #cmsgpack.pack(t)", 0) == 17


def test_huge_table_and_string_under_maxmemory(start_server):
    s = start_server(args=("--maxmemory", "64mb"))
    r = s.client()
    assert "not enough memory" in err(r, "local t = {} for i = 1, 1e8 do t[i] = i end return #t")
    assert "not enough memory" in err(r, "return #string.rep('x', 2^31 - 2)")
    assert "not enough memory" in err(r, "local s = 'x' for i = 1, 40 do s = s .. s end return #s")
    assert "not enough memory" in err(r, "return #table.concat({string.rep('y', 2^25), string.rep('z', 2^25)})")
    # the heap is returned: a normal script runs, and Lua memory went down
    assert r.eval("return #string.rep('x', 1000)", 0) == 1000
    r.execute_command("SCRIPT", "FLUSH")
    assert r.info("memory")["used_memory_lua"] < 10_000_000


def test_big_but_allowed_reply(r):
    n = r.eval("local t = {} for i = 1, 200000 do t[i] = i end return t", 0)
    assert len(n) == 200000 and n[-1] == 200000
    r.rpush("big", *range(50000))
    assert r.eval("return #redis.call('LRANGE', KEYS[1], 0, -1)", 1, "big") == 50000


def test_malformed_json(r):
    for doc in ["{bad", "[1,2", '{"a":}', "nul", "1e999999", '"\\ud800"', "[" * 100000 + "]" * 100000, "", "\x00\xff"]:
        try:
            r.eval("return cjson.encode(cjson.decode(ARGV[1]))", 0, doc)
        except redis.exceptions.ResponseError:
            pass
    assert r.ping()
    assert "too many nested data structures" in err(r, "return cjson.decode(string.rep('[', 100000))")


def test_malformed_msgpack(r):
    cases = [b"\x92\x01", b"\xc1", b"\xdb\xff\xff\xff\xff", b"\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff",
             b"\x91" * 100000, b"\xc7\xff\x01", b"\xcb\x01\x02", b""]
    for data in cases:
        try:
            r.eval("return {cmsgpack.unpack(ARGV[1])}", 0, data)
        except redis.exceptions.ResponseError:
            pass
    assert r.ping()
    assert "Missing bytes" in err(r, "return cmsgpack.unpack(ARGV[1])", b"\xdb\xff\xff\xff\xff")


def test_random_bytes_to_every_decoder(r):
    rng = random.Random(1234)
    script = """
    local ok1 = pcall(cjson.decode, ARGV[1])
    local ok2 = pcall(cmsgpack.unpack, ARGV[1])
    local ok3 = pcall(struct.unpack, ARGV[2], ARGV[1])
    local ok4 = pcall(loadstring, ARGV[1])
    return 1
    """
    for _ in range(300):
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        fmt = "".join(rng.choice("<>!bBhHiIlLfdcsx0123456789 ") for _ in range(rng.randrange(1, 12)))
        assert r.eval(script, 0, data, fmt) == 1
    assert r.ping()


def test_sandbox_escapes_fail(r):
    assert "nonexistent global variable 'os'" in err(r, "return os.execute('true')")
    assert "nonexistent global variable 'io'" in err(r, "return io.open('/etc/passwd')")
    assert "nonexistent global variable 'require'" in err(r, "return require('os')")
    assert "nonexistent global variable 'setfenv'" in err(r, "setfenv(1, {})")
    assert "readonly table" in err(r, "_G.x = 1")
    assert "readonly table" in err(r, "redis.call = function() end")
    assert "readonly table" in err(r, "getmetatable('').__index = nil")
    assert err(r, "setmetatable(_G, nil)").startswith("Attempt to modify a readonly table")  # Redis's text
    assert "readonly table" in err(r, "getmetatable(_G).__index = {}")
    assert "nonexistent global variable 'x'" in err(r, "return getmetatable(_G).__index(_G, 'x')")
    assert r.eval("return getmetatable(setmetatable({}, {})) ~= nil", 0) == 1  # ordinary tables still work
    # bytecode is refused however it is handed in
    assert r.eval("local f, e = loadstring(string.dump(function() return 1 end)) return e", 0).endswith(
        "unexpected symbol near 'char(27)'")
    assert r.eval("local d = string.dump(function() return 1 end) local done = false "
                  "local f, e = load(function() if done then return nil end done = true return d end) return e", 0
                  ).endswith("unexpected symbol near 'char(27)'")
    # and the next script still has a working environment
    assert r.eval("return string.upper('ok') .. tostring(redis ~= nil)", 0) == "OKtrue"
