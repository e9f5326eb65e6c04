"""The scripts' cjson and bit libraries (src/lua_cjson.c, src/lua_bit.c).

Differential part: the same scripts run on redis-like-server and on Debian's
redis-server 7.0.15 and the raw replies must be byte-identical: cjson.encode
of every kind of value (number formatting at every precision, escaping of
all 256 bytes, sparse arrays, invalid numbers, nesting, key types), decode
of valid and broken documents (every error text and position, unicode
escapes, nonstandard numbers), the settings functions and their argument
errors, cjson.new; every bit function over edge and random values
(0, -1, 2^31, -2^31, 2^32, 1e15, NaN, Inf, huge and INT_MIN counts for
tohex...).  The cjson settings live in the Lua state across scripts, so a
case that changes one restores it, and both servers run the cases in the
same order.

Hostile part (our server; each asserts an error and that the server still
answers): tohex with INT_MIN, encodes whose output exceeds the script heap
(a server with maxmemory 100mb), deep nesting both ways, huge numbers of
elements, a single long encode stopped by SCRIPT KILL, and the heap given
back after each failure.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_lua_cjson_bit.py"""
import hashlib
import random
import threading
import time

import pytest
import redis

from rawresp import ExactConn, RawConn


@pytest.fixture(scope="module", autouse=True)
def _asan_segv(asan_segv_in_charge):
    """ASan reports a fault here itself (conftest.asan_segv_in_charge)."""

# A script prefix: a canonical text of any Lua value (sorted keys, numbers
# with 17 digits), so a decode is compared value by value, not through the
# reply conversion.
DUMP = r"""
local function dump(v)
  local t = type(v)
  if t == 'table' then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return type(a) .. tostring(a) < type(b) .. tostring(b) end)
    local parts = {}
    for _, k in ipairs(keys) do parts[#parts + 1] = dump(k) .. '=' .. dump(v[k]) end
    return '{' .. table.concat(parts, ',') .. '}'
  elseif t == 'number' then return string.format('%.17g', v)
  elseif t == 'string' then return string.format('%q', v)
  elseif v == cjson.null then return 'NULL'
  else return t .. ':' .. tostring(v) end
end
"""

ENCODE_EXPRS = [
    "nil", "cjson.null", "true", "false", "0", "-0", "1", "-1", "0.1", "-123.5", "100", "1e14", "1e15",
    "99999999999999", "123456789012345", "3.14159265358979", "0.30000000000000004", "1e-7", "-1e-300", "1e21",
    "2^53", "2^63", "-2^31", "12345678901234567890", "5e-324", "1.7976931348623157e308", "''", "'abc'",
    "'a/b\"c\\\\d\\b\\f\\n\\r\\t'", "string.char(0, 1, 31, 127, 128, 255)", "'\\u{e9}'", "'caf\\195\\169'",
    "{}", "{{}}", "{{{{}}}}", "{1, 2, 3}", "{1, nil, 3}", "{[1] = 1, [3] = 3}", "{[1] = 1, [4] = 4}",
    "{[10] = 1}", "{[11] = 1}", "{[20] = 1, [1] = 2}", "{[2] = 'b'}", "{[1] = cjson.null}", "{a = 1}",
    "{['a/b'] = '\\\\'}", "{[1.5] = 1}", "{[0.5] = 'x'}", "{[-1] = 1}", "{[0] = 1}", "{['1'] = 1}",
    "{[1e300] = 1}", "{[2^31] = 1}", "{[2^31 - 1] = 1}", "{[2^40] = 1, [1] = 2}", "{[1] = 2, [2^40] = 1}",
    "{1, 2, x = 3}", "{a = {b = {c = {}}}}", "{a = 1, b = 2, c = 3, d = {1, 2}, e = 'x', f = true, g = false}",
    "{[1] = 'a', [2] = 'b', [3] = 'c', n = 3}", "{[true] = 1}", "{[print or 1] = 1}", "{f = function() end}",
    "function() end", "coroutine.create(function() end)", "{1/0}", "{0/0}", "{[1/0] = 1}", "1/0", "-1/0",
    "0/0", "{{1, {2, {3, {4, {5}}}}}}", "{ {a = {}}, {b = {1}} }", "{-0.0, 0.0, 1e-320}",
]

DECODE_DOCS = [
    "", " ", "{bad", "[1,2", '{"a":}', "nul", "1e999999", "-1e999999", '"\\ud800"', '"\\ud800\\udc00"',
    '"\\udc00"', '"\\ud800x"', '"\\ud800\\u0041"', '"\\u00e9\\u4e2d\\u0000z"', '"\\u00E9"', '"\\uZZZZ"',
    '"\\u12"', '"\\u12', '"\\x"', '"abc', '"ab\\', '"a\\/b\\"\\\\\\b\\f\\n\\r\\t"', "[1,]", "[,1]", '{"a":1,}',
    '{"a" 1}', "{1:2}", "[1 2]", '{"a":1 "b"}', "[1] x", "[1] [", "  [1]  ", "+1", "0x10", "-0x10", "012",
    "inf", "-inf", "nan", "NaN", "Infinity", "-Infinity", "infinity", ".5", "1.", "1.5e", "-", "- 1", "1e5",
    "tru", "truex", "true", "false", "null", "[null]", '{"a":null}', "1\0xyz", '"a\0b"', "\0", "a\0",
    "[1]\0garbage", "{}", "[]", "\t\n\r 7", "\f7", "[1:2]", '{"a":1}}', '"\t"', '"\\u0041"', '"\\U0041"',
    '"\\uD834\\uDD1E"', '"\\ud834\\udd1e"', '"\\uDBFF\\uDFFF"', '"\\u0800"', '"\\u07ff"', '"\\u007f\\u0080"',
    '[true, false, null, 1.5, "x", {"k": [1]}]', '{"a":1,"a":2}', "0", "-0", "1e-400", "0x1p4", "1e+2",
    "1E2", "[1,2,3", "[", "{", '{"a"', '{"a":', "]", "}", ":", ",", "xyz", "nullx", "\xff\xfe", "ab", "7 8",
    '"\\u0000"', "+", "+x", "-x", "i", "N", "Inf", "nanx", "nan(12)", "infinit", "0x", "1e", "1e+", "--1",
    "-+1", "0.e1", "1_0", "1.5.5", "0e", "I", "n", "+nan", "-nan", "0X1F", "0x1.8p1", "00", "-012",
    '{"a":[1,2,{"b":null}],"c":"\\u00e9"}', '{"":""}', '[[[[[]]]]]', '{"a":{"b":{"c":[{}]}}}',
    '"' + "\\n" * 50 + '"', '"' + "x" * 10000 + '\\t"', "[" + ",".join(str(i) for i in range(300)) + "]",
    "\xef\xbb\xbf[1]", '"\xc3\xa9\x80\xff"', "[1e308, 1e309, -1e309, 4.9e-324, 2.5e-324]",
    '["\\/", "\\\\\\"", "\\b\\f"]', '{"a" : 1 , "b" : [ 1 , 2 ] }', "[-]", "[01]", "[1,,2]", '{"a":1,,}',
    '{,}', '{"a"::1}', '"unterminated \\u00', "[\"a\"\n,\n\"b\"]",
]

SCRIPTS = [
    # the library as Redis shows it
    "local t = {} for k, v in pairs(cjson) do t[#t + 1] = k .. '=' .. type(v) end table.sort(t) return t",
    "local t = {} for k, v in pairs(bit) do t[#t + 1] = k .. '=' .. type(v) end table.sort(t) return t",
    "return {cjson._NAME, cjson._VERSION, tostring(cjson.null), type(cjson.null)}",
    # argument errors, raised where Redis raises them (the caller's line)
    "return cjson.encode()", "return cjson.encode(1, 2)", "return cjson.decode()", "return cjson.decode(1, 2)",
    "return cjson.decode({})", "return cjson.decode(12)", "return cjson.decode(true)",
    "\n\nreturn cjson.encode({[true] = 1})", "\nlocal x = 1\nreturn cjson.decode('[1,')",
    "return pcall(cjson.encode, {[true] = 1})", "return {pcall(cjson.decode, '{')}",
    "local ok, e = pcall(cjson.encode, function() end) return e",
    # settings: values, ranges, wrong types, too many arguments
    "return {cjson.encode_sparse_array()}", "return cjson.encode_max_depth()", "return cjson.decode_max_depth()",
    "return cjson.encode_number_precision()", "return cjson.encode_keep_buffer()",
    "return cjson.decode_invalid_numbers()", "return tostring(cjson.encode_invalid_numbers())",
    "return cjson.encode_max_depth(0)", "return cjson.encode_max_depth('x')", "return cjson.encode_max_depth(-5)",
    "return cjson.decode_max_depth(0)", "return cjson.encode_number_precision(15)",
    "return cjson.encode_number_precision(0)", "return cjson.encode_keep_buffer('x')",
    "return cjson.encode_keep_buffer(1, 2)", "return cjson.encode_keep_buffer(1)",
    "return cjson.encode_invalid_numbers('maybe')", "return cjson.encode_sparse_array(1, 2, 3, 4)",
    "return cjson.encode_sparse_array(false, -1)", "return cjson.encode_sparse_array(false, 2, -1)",
    "return cjson.encode_sparse_array(false, 'x')", "return cjson.encode_sparse_array('maybe')",
    "return cjson.encode_max_depth(nil)", "return cjson.decode_invalid_numbers('x')",
    "local r = {cjson.encode_keep_buffer(false), cjson.encode_keep_buffer('on'), cjson.encode_keep_buffer('off'),"
    " cjson.encode_keep_buffer(true)} return r",
    "local r = cjson.encode_number_precision(5.9) cjson.encode_number_precision(14) return r",
    "local r = cjson.encode_max_depth(2^32 + 5) local s = cjson.encode_max_depth() cjson.encode_max_depth(1000)"
    " return {r, s}",
    "local r = {cjson.encode_sparse_array('on', 3)} local s = {cjson.encode_sparse_array('off', 2, 10)}"
    " return {tostring(r[1]), r[2], r[3], tostring(s[1]), s[2], s[3]}",
    # settings in effect
    "cjson.encode_invalid_numbers(true) local r = cjson.encode({1/0, -1/0, 0/0, -(0/0), 5})"
    " cjson.encode_invalid_numbers(false) return r",
    "cjson.encode_invalid_numbers('null') local r = cjson.encode({1/0, -1/0, 0/0, 5, {[1/0] = 1}})"
    " cjson.encode_invalid_numbers(false) return r",
    "cjson.encode_invalid_numbers(true) local r = cjson.encode({[1/0] = 1, [-1/0] = 2})"
    " cjson.encode_invalid_numbers(false) return r",
    "local a = cjson.encode_invalid_numbers('null') local b = cjson.encode_invalid_numbers()"
    " local c = cjson.encode_invalid_numbers('on') cjson.encode_invalid_numbers('off')"
    " return {tostring(a), tostring(b), tostring(c), tostring(cjson.encode_invalid_numbers())}",
    "cjson.encode_sparse_array(true) local r = cjson.encode({[11] = 1, [1] = 'a'}) cjson.encode_sparse_array(false)"
    " return r",
    "cjson.encode_sparse_array(false, 0) local r = cjson.encode({[30] = 1}) cjson.encode_sparse_array(false, 2, 10)"
    " return r",
    "cjson.encode_sparse_array(false, 0) local r = cjson.encode({[2^40] = 1}) cjson.encode_sparse_array(false, 2, 10)"
    " return r",
    "cjson.encode_sparse_array(false, 1, 0) local ok, e = pcall(cjson.encode, {[2] = 1})"
    " local r2 = cjson.encode({1, 2}) cjson.encode_sparse_array(false, 2, 10) return {tostring(ok), e, r2}",
    "cjson.encode_sparse_array(false, 3, 5) local a = {pcall(cjson.encode, {[6] = 1, [1] = 1})}"
    " local b = cjson.encode({[5] = 1}) cjson.encode_sparse_array(false, 2, 10) return {tostring(a[1]), a[2], b}",
    "cjson.encode_max_depth(2) local ok, e = pcall(cjson.encode, {{{1}}}) local r = cjson.encode({{1}})"
    " cjson.encode_max_depth(1000) return {tostring(ok), e, r}",
    "cjson.decode_max_depth(2) local ok, e = pcall(cjson.decode, '[[[1]]]') local r = cjson.decode('[[1]]')"
    " cjson.decode_max_depth(1000) return {tostring(ok), e, r[1][1]}",
    "cjson.decode_max_depth(2) local ok, e = pcall(cjson.decode, '{\"a\":{\"b\":{}}}') cjson.decode_max_depth(1000)"
    " return {tostring(ok), e}",
    "cjson.decode_invalid_numbers(false) local t = {} for _, s in ipairs({'0x10', 'inf', '+1', '012', 'nan', '-inf',"
    " '1.5', '-0', '1e5', 'NaN', '-Infinity', '00', '-012', '0', '-', '-x', '0.5', '[0x1]', '{\"a\":-nan}'}) do"
    " local ok, e = pcall(cjson.decode, s) t[#t + 1] = s .. '=' .. tostring(ok) .. ':' .. tostring(e) end"
    " cjson.decode_invalid_numbers(true) return t",
    # cjson.new: a table of its own settings
    "local c = cjson.new() c.encode_max_depth(3) local r = {cjson.encode_max_depth(), c.encode_max_depth()} return r",
    "local c = cjson.new() return {c._NAME, c._VERSION, tostring(c.null == cjson.null), type(c.new),"
    " c.encode({1, {a = 'x'}}), c.decode('[5]')[1]}",
    "local c = cjson.new() c.encode_number_precision(3) return {c.encode(math.pi), cjson.encode(math.pi)}",
    # nesting and round trips
    "local t = {} t[1] = t return cjson.encode(t)",
    "local t = {} local c = t for i = 1, 5000 do c[1] = {} c = c[1] end return cjson.encode(t)",
    "local t = {} local c = t for i = 1, 999 do c[1] = {} c = c[1] end return #cjson.encode(t)",
    "local t = {} local c = t for i = 1, 1000 do c.k = {} c = c.k end return cjson.encode(t)",
    "return cjson.decode(string.rep('[', 100000))",
    "return cjson.decode(string.rep('[', 1001))",
    "return #cjson.encode(cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000)))",
    "return cjson.decode(string.rep('{\"a\":', 1001))",
    "return cjson.decode(string.rep('[', 1000) .. '1' .. string.rep(']', 1000))[1] ~= nil",
    "return cjson.encode(cjson.decode('{\"a\":[1,2,{\"b\":null}],\"c\":\"\\\\u00e9\"}'))",
    "local s = '' for i = 0, 255 do s = s .. string.char(i) end return cjson.encode(s)",
    "local s = '' for i = 0, 255 do s = s .. string.char(i) end return cjson.decode(cjson.encode(s)) == s",
    "local t = {} for i = 1, 30 do t['k' .. i] = i end return cjson.encode(t)",
    "local t = {} for i = 1, 200 do t[i] = i * 1.5 end return cjson.encode(t)",
    "return #cjson.encode(string.rep('\\1', 100000))",
    "return #cjson.encode(string.rep('x', 3 * 2^20))",
    "local t = {} for i = 1, 100000 do t[i] = {i, tostring(i)} end local s = cjson.encode(t)"
    " return {#s, #cjson.decode(s)}",
]

BIT_VALS = ["0", "1", "-1", "2^31", "-2^31", "2^31-1", "-2^31-1", "2^32", "2^32+1", "-2^32", "2^32-1", "1e15",
            "-1e15", "2^52", "2^53", "2^53+3", "2^51", "-2^51", "1.5", "2.5", "-0.5", "0.5", "-1.5", "1e300",
            "-1e300", "1/0", "-1/0", "0/0", "0x12345678", "0xdeadbeef", "'0x10'", "' 12 '", "2^63", "-2^63",
            "6755399441055744", "1e-300", "-0"]
TOHEX_COUNTS = ["-2147483648", "2147483647", "-2147483647", "-8", "-9", "8", "9", "0", "-1", "1", "4", "-4",
                "2^32", "2^32-1", "2^32+3", "1e300", "-1e300", "0/0", "1/0", "-1/0", "-2^31-1", "2^31", "2.5",
                "-7.5", "1e15"]


def random_values(seed, n):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        kind = rng.randrange(3)
        if kind == 0:
            out.append(str(rng.randrange(-2 ** rng.randrange(1, 62), 2 ** rng.randrange(1, 62))))
        elif kind == 1:
            out.append(repr(rng.uniform(-1, 1) * 2.0 ** rng.randrange(-40, 70)))
        else:
            out.append(repr(rng.uniform(-1, 1) * 10.0 ** rng.randrange(-320, 300)))
    return out


def bit_scripts():
    vals = BIT_VALS + random_values(31, 30)
    lua_vals = "{" + ", ".join(vals) + "}"
    scripts = []
    for fn in ("tobit", "bnot", "bswap", "tohex"):
        scripts.append("local v = %s local o = {} for i = 1, %d do o[i] = tostring(bit.%s(v[i])) end "
                       "return table.concat(o, ' ')" % (lua_vals, len(vals), fn))
    for fn in ("band", "bor", "bxor", "lshift", "rshift", "arshift", "rol", "ror"):
        scripts.append("local v = %s local o = {} for i = 1, %d do for j = 1, %d do "
                       "o[#o + 1] = tostring(bit.%s(v[i], v[j])) end end return table.concat(o, ' ')"
                       % (lua_vals, len(vals), len(vals), fn))
    scripts.append("local v = %s local o = {} for i = 1, %d do for j = 1, %d do "
                   "o[#o + 1] = tostring(bit.band(v[i], v[j], v[(i + j) %% %d + 1])) .. tostring(bit.bor(v[i], "
                   "v[j], 7, v[i])) end end return table.concat(o, ' ')" % (lua_vals, len(vals), len(vals), len(vals)))
    counts = "{" + ", ".join(TOHEX_COUNTS) + "}"
    scripts.append("local v, n = %s, %s local o = {} for i = 1, %d do for j = 1, %d do "
                   "o[#o + 1] = bit.tohex(v[i], n[j]) end end return table.concat(o, ' ')"
                   % (lua_vals, counts, len(vals), len(TOHEX_COUNTS)))
    scripts += [
        "return bit.tohex(65535, -2147483648)", "return bit.tohex(65535, 2147483647)", "return bit.tohex(-1)",
        "return bit.tohex(2^31)", "return bit.tohex(1e15)", "return bit.tohex()", "return bit.tohex('x')",
        "return bit.tohex(5, 'x')", "return bit.tohex(5, nil)", "return bit.tohex(5, {})", "return bit.tobit()",
        "return bit.tobit('')", "return bit.tobit(true)", "return bit.tobit(0, 1)", "return bit.band()",
        "return bit.band(1)", "return bit.band(1, 'x')", "return bit.band(1, nil, 3)", "return bit.band('x', 1)",
        "return bit.bor(0, 'x', 'y')", "return bit.bxor(1, 2, {})", "return bit.lshift(1)", "return bit.lshift()",
        "return bit.rol('a', 1)", "return bit.bswap()", "return bit.bnot(nil)", "return bit.arshift(-256, 36)",
        "return {bit.lshift(1, 31), bit.lshift(1, 32), bit.lshift(1, -1), bit.rshift(-1, 1), bit.rol(0x12345678, 0)}",
        "return pcall(bit.tohex, 1, 'z')",
    ]
    return scripts


def run_eval(port, script, args=()):
    c = ExactConn(port)
    try:
        raw, _ = c.call("EVAL", script, "0", *(a.encode("latin-1") if isinstance(a, str) else a for a in args))
        return raw
    finally:
        c.close()


def differences(server, redis_ref, cases):
    """Run (script, args) cases on both servers; the mismatching ones."""
    bad = []
    for script, args in cases:
        ours = run_eval(server.port, script, args)
        ref = run_eval(redis_ref.port, script, args)
        if ours != ref:
            bad.append((script[:200], args[:1], ours[:300], ref[:300]))
    return bad


def report(bad):
    return "\n".join("%r %r:\n  ours  %r\n  redis %r" % m for m in bad[:15])


pytestmark = pytest.mark.differential


def test_encode_matches_redis(server, redis_ref):
    cases = [("return cjson.encode(%s)" % e, ()) for e in ENCODE_EXPRS]
    # the same values inside an array and as an object's value
    cases += [("return cjson.encode({[1] = %s, [2] = 'end'})" % e, ()) for e in ENCODE_EXPRS]
    cases += [("return cjson.encode({k = %s})" % e, ()) for e in ENCODE_EXPRS]
    assert len(cases) > 200
    bad = differences(server, redis_ref, cases)
    assert not bad, report(bad)


def test_number_formatting_matches_redis(server, redis_ref):
    nums = random_values(7, 300) + ["2^%d" % i for i in range(0, 70, 3)] + ["1/3", "-2/3", "1e-5", "123.456e-300"]
    arr = "{" + ", ".join(nums) + "}"
    cases = [("cjson.encode_number_precision(%d) local s = cjson.encode(%s) cjson.encode_number_precision(14) "
              "return s" % (p, arr), ()) for p in range(1, 15)]
    # numbers as object keys go through the same formatting
    cases.append(("local t = {} for i, v in ipairs(%s) do t[v] = i end t.x = 1 return cjson.encode(t)" % arr, ()))
    bad = differences(server, redis_ref, cases)
    assert not bad, report(bad)


def test_decode_matches_redis(server, redis_ref):
    # each document decoded directly (an error is the script's error
    # reply, with the caller's line) and under pcall (the bare message)
    direct = [(DUMP + "return dump(cjson.decode(ARGV[1]))", (doc,)) for doc in DECODE_DOCS]
    protected = [(DUMP + "local ok, v = pcall(cjson.decode, ARGV[1]) return {tostring(ok), ok and dump(v) or v}",
                  (doc,)) for doc in DECODE_DOCS]
    assert len(direct) > 140
    bad = differences(server, redis_ref, direct + protected)
    assert not bad, report(bad)


def test_decode_random_documents_match_redis(server, redis_ref):
    """Mutations of valid documents (bytes dropped, swapped, inserted),
    decoded in one script per batch on both servers."""
    rng = random.Random(2024)
    seeds = [d for d in DECODE_DOCS if d and "\0" not in d][:60] + [
        '{"a":[1,2,{"b":null}],"c":"\\u00e9","d":-1.5e3,"e":true,"f":"\\ud834\\udd1e"}']
    alphabet = '{}[]:,"\\ u0123456789abcdefxXeE+-.tfn \t\n\x00\xff'
    batches = []
    for _ in range(8):
        docs = []
        for _ in range(100):
            d = list(rng.choice(seeds))
            for _ in range(rng.randrange(1, 4)):
                op = rng.randrange(3)
                pos = rng.randrange(len(d) + 1)
                if op == 0 and d:
                    del d[min(pos, len(d) - 1)]
                elif op == 1:
                    d.insert(pos, rng.choice(alphabet))
                elif d:
                    d[min(pos, len(d) - 1)] = rng.choice(alphabet)
            docs.append("".join(d))
        batches.append((DUMP + "local o = {} for i, doc in ipairs(ARGV) do local ok, v = pcall(cjson.decode, doc) "
                        "o[i] = tostring(ok) .. ' ' .. (ok and dump(v) or v) end return o", tuple(docs)))
    bad = differences(server, redis_ref, batches)
    assert not bad, report(bad)


def random_lua_value(rng, depth=0):
    kind = rng.randrange(9 if depth < 4 else 5)
    if kind == 0:
        return repr(rng.uniform(-1e6, 1e6))
    if kind == 1:
        return str(rng.randrange(-1000, 1000))
    if kind == 2:
        return '"%s"' % "".join(rng.choice('ab/"\\\x01\x7f\xc3\xa9 ') for _ in range(rng.randrange(6))).replace(
            "\\", "\\\\").replace('"', '\\"')
    if kind == 3:
        return rng.choice(["true", "false", "cjson.null"])
    if kind == 4:
        return "nil"
    if kind in (5, 6):
        return "{" + ", ".join(random_lua_value(rng, depth + 1) for _ in range(rng.randrange(5))) + "}"
    items = []
    for _ in range(rng.randrange(6)):
        key = rng.choice(['"k%d"' % rng.randrange(20), str(rng.randrange(1, 30)), repr(rng.uniform(-5, 5))])
        items.append("[%s] = %s" % (key, random_lua_value(rng, depth + 1)))
    return "{" + ", ".join(items) + "}"


def test_encode_random_tables_match_redis(server, redis_ref):
    rng = random.Random(99)
    values = [random_lua_value(rng) for _ in range(400)]
    # 40 values per script, each encoded under pcall (sparse ones fail)
    cases = []
    for i in range(0, len(values), 40):
        body = " ".join("o[#o + 1] = tostring(select(2, pcall(cjson.encode, %s)))" % v for v in values[i:i + 40])
        cases.append(("local o = {} %s return o" % body, ()))
    bad = differences(server, redis_ref, cases)
    assert not bad, report(bad)


def test_scripts_match_redis(server, redis_ref):
    bad = differences(server, redis_ref, [(s, ()) for s in SCRIPTS])
    assert not bad, report(bad)


def test_bit_matches_redis(server, redis_ref):
    scripts = bit_scripts()
    bad = differences(server, redis_ref, [(s, ()) for s in scripts])
    assert not bad, report(bad)
    # and the corpus is not trivially empty: 67 values squared per function
    assert len(run_eval(server.port, scripts[4])) > 67 * 67 * 2


def test_evalsha_and_resp3_match_redis(server, redis_ref):
    """A few cases again through EVALSHA and RESP3 (decoded tables and
    cjson.null converted to replies)."""
    cases = ["return cjson.decode('[1, \"a\", null, true, false, {\"k\": 2}]')", "return cjson.decode('[]')",
             "return cjson.encode({1, 2})", "return cjson.decode('{bad')", "return bit.tohex(65535, -2147483648)"]
    for resp in (2, 3):
        for script in cases:
            replies = []
            for port in (server.port, redis_ref.port):
                c = ExactConn(port)
                if resp == 3:
                    c.call("HELLO", "3")
                replies.append((c.call("EVAL", script, "0")[0],
                                c.call("EVALSHA", hashlib.sha1(script.encode()).hexdigest(), "0")[0]))
                c.close()
            assert replies[0] == replies[1], (resp, script, replies)


# ------------------------------------------------------------------ hostile

def eval_error(r, script, *args):
    with pytest.raises(redis.exceptions.ResponseError) as e:
        r.eval(script, 0, *args)
    assert r.ping()
    return str(e.value)


@pytest.fixture(scope="module")
def small(request):
    """Our server with a 100 MB script heap (maxmemory), shared by the
    memory cases."""
    from conftest import ServerProcess, SERVER
    s = ServerProcess(SERVER, ["--maxmemory", "100mb"])
    yield s
    s.stop()


@pytest.fixture
def rs(small):
    c = small.client(socket_timeout=120)
    c.execute_command("SCRIPT", "FLUSH")
    yield c
    c.close()


def assert_memory_given_back(r):
    """After a failed script: nothing of it stays allocated.  SCRIPT FLUSH
    first, because Lua 5.1 has no emergency collection: garbage left by a
    script that hit the heap limit can keep the next ones from allocating
    (see the report of this change); a leaked encoder buffer would still
    count in used_memory afterwards (tens of MB here)."""
    r.execute_command("SCRIPT", "FLUSH")
    assert r.info("memory")["used_memory"] < 16 * 2 ** 20
    assert r.eval("return #cjson.encode(string.rep('z', 10 * 2^20))", 0) == 10 * 2 ** 20 + 2


def oom_in_pcall(r, prepare, call):
    """Run `prepare` (Lua building the input), then `call` under pcall;
    the error must come from the call itself, and the server stays up."""
    # the collection after the pcall: the failed call's garbage fills the
    # heap, and the reply table needs room
    ok, err = r.eval("%s local ok, e = pcall(function() return %s end) collectgarbage() "
                     "return {tostring(ok), tostring(e)}" % (prepare, call), 0)
    assert r.ping()
    return ok, err


def test_tohex_int_min(r):
    assert r.eval("return bit.tohex(65535, -2147483648)", 0) == "0000FFFF"
    assert r.eval("return bit.tohex(-1, -2147483648)", 0) == "FFFFFFFF"
    assert r.eval("return bit.tohex(65535, 2^31)", 0) == "0000FFFF"   # 2^31 wraps to INT_MIN
    assert r.eval("return #bit.tohex(1, 2^31 - 1) + #bit.tohex(1, -2^31 + 1) + #bit.tohex(1, 1e300)", 0) == 24
    assert r.ping()


@pytest.mark.parametrize("prepare, call", [
    ("local s = string.rep('\\1', 12 * 2^20)", "cjson.encode(s)"),            # 6 bytes out per byte in
    ("local s = string.rep('x', 25 * 2^20)", "cjson.encode({s, s, s})"),
    ("local s = string.rep('\\\\', 2^20) local t = {} for i = 1, 60 do t[i] = s end", "cjson.encode(t)"),
    ("local t = {} for i = 1, 2e6 do t[i] = 'abcdefghijklmnopqrstuvwxyz' end", "cjson.encode({t, t})"),
    ("local n = 0", "cjson.encode(string.rep('x', 2^30))"),                     # the input itself does not fit
])
def test_encode_output_past_the_heap(rs, prepare, call):
    ok, err = oom_in_pcall(rs, prepare, call)
    assert (ok, err) == ("false", "not enough memory")
    assert_memory_given_back(rs)


def test_encode_sparse_array_unbounded(rs):
    # with the sparseness check off, {[2^31 - 1] = 1} asks for 2^31 nulls:
    # the heap limit ends it, and a pcall sees a catchable error
    msg = rs.eval("cjson.encode_sparse_array(false, 0) local ok, e = pcall(cjson.encode, {[2^31 - 1] = 1}) "
                  "cjson.encode_sparse_array(false, 2, 10) return tostring(ok) .. ' ' .. e", 0)
    assert msg == "false not enough memory"
    assert rs.eval("return {cjson.encode_sparse_array()}", 0) == [None, 2, 10]
    assert_memory_given_back(rs)


def test_huge_numbers_of_elements(rs):
    # many elements that fit: exact results
    assert rs.eval("local t = {} for i = 1, 1e6 do t[i] = i end local s = cjson.encode(t) "
                   "return {#s, #cjson.decode(s)}", 0) == [6888897, 1000000]
    assert rs.eval("local t = {} for i = 1, 5e4 do t['k' .. i] = {i} end local n = 0 "
                   "for _ in pairs(cjson.decode(cjson.encode(t))) do n = n + 1 end return n", 0) == 50000
    assert_memory_given_back(rs)
    # and too many: millions of tables decoded from a small document
    for prepare in ("local doc = '[' .. string.rep('[],', 3e6) .. '[]]'",
                    "local doc = '[' .. string.rep('{\"a\":[1]},', 1e6) .. '1]'"):
        assert oom_in_pcall(rs, prepare, "cjson.decode(doc)") == ("false", "not enough memory")
        assert_memory_given_back(rs)


def test_deep_nesting_both_ways(r):
    # the default limits, with Redis's texts (also in the differential corpus)
    assert "Cannot serialise, excessive nesting (1001)" in eval_error(
        r, "local t = {} local c = t for i = 1, 100000 do c[1] = {} c = c[1] end return cjson.encode(t)")
    assert "Found too many nested data structures (1001) at character 1001" in eval_error(
        r, "return cjson.decode(string.rep('[', 100000))")
    assert "Found too many nested data structures (1001)" in eval_error(
        r, "return cjson.decode(string.rep('{\"a\":', 100000))")
    # limits raised to the maximum: the Lua stack still bounds the recursion
    msg = eval_error(r, "cjson.encode_max_depth(2^31 - 1) local t = {} local c = t "
                        "for i = 1, 100000 do c[1] = {} c = c[1] end "
                        "local ok, e = pcall(cjson.encode, t) cjson.encode_max_depth(1000) error(e)")
    assert "Cannot serialise, excessive nesting" in msg
    msg = eval_error(r, "cjson.decode_max_depth(2^31 - 1) local ok, e = pcall(cjson.decode, string.rep('[', 100000)) "
                        "cjson.decode_max_depth(1000) error(e)")
    assert "Found too many nested data structures" in msg
    msg = eval_error(r, "cjson.decode_max_depth(2^31 - 1) local ok, e = pcall(cjson.decode, "
                        "string.rep('{\"k\":', 100000)) cjson.decode_max_depth(1000) error(e)")
    assert "Found too many nested data structures" in msg
    # a self-referencing table, and the settings are back
    assert "excessive nesting" in eval_error(r, "local t = {} t.a = t return cjson.encode(t)")
    assert r.eval("return {cjson.encode_max_depth(), cjson.decode_max_depth()}", 0) == [1000, 1000]
    # deep but allowed: 1000 levels each way
    assert r.eval("local t = {} local c = t for i = 1, 999 do c[1] = {} c = c[1] end "
                  "return #cjson.encode(cjson.decode(cjson.encode(t)))", 0) == 2000


def test_hostile_decode_inputs(r):
    # escapes, surrogates and truncations at the very end of the input
    for doc in ['"\\', '"\\u', '"\\ud800\\', '"\\ud800\\u', '"\\ud800\\udc0', "-", "+", "0x", "[" * 5000, "{" * 5000,
                '{"' * 5000, "[1," * 5000, '"' + "\\u0041" * 100000, "\x00" * 10, "[\x00]"]:
        assert eval_error(r, "return cjson.decode(ARGV[1])", doc).startswith(("user_script", "JSON parser"))
    # a long string with escapes decodes exactly
    assert r.eval("local s = cjson.decode('\"' .. string.rep('\\\\u00e9\\\\n', 100000) .. '\"') return #s", 0) == 300000


def test_long_encode_stopped_by_script_kill(start_server):
    """One cjson.encode call that would run for seconds (2^31 nulls with
    the sparseness check off): it gives the busy check its turns, so other
    clients see -BUSY and SCRIPT KILL stops it inside the C call."""
    s = start_server(args=("--lua-time-limit", "50", "--maxmemory", "4gb"))
    caller = RawConn(s.port, timeout=60)
    caller.send("EVAL", "cjson.encode_sparse_array(false, 0) return #cjson.encode({[2^31 - 1] = 1})", "0")
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("reply", caller.read()))
    t.start()
    r = s.client()
    deadline = time.time() + 20
    busy = False
    while time.time() < deadline and not busy:
        try:
            r.ping()
        except redis.exceptions.ResponseError as e:
            busy = str(e).startswith("BUSY")
        except redis.exceptions.BusyLoadingError:
            busy = True
        time.sleep(0.02)
    assert busy, "no -BUSY while the encode ran"
    assert r.execute_command("SCRIPT", "KILL") in ("OK", True)
    t.join(20)
    assert result["reply"][0] == "err" and "Script killed by user" in result["reply"][1], result
    caller.close()
    assert r.ping()
    assert r.eval("cjson.encode_sparse_array(false, 2, 10) return cjson.encode({1, 2})", 0) == "[1,2]"
    assert r.info("memory")["used_memory"] < 200 * 2 ** 20   # the killed encode's buffer was freed
