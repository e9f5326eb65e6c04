"""EVAL script eviction (Redis 7.4), against Redis 7.4.1.

The scripts EVAL creates are kept in a least-recently-run list of 500;
creating one more evicts the oldest (INFO stats evicted_scripts counts it,
EVALSHA of it gets -NOSCRIPT).  SCRIPT LOAD's scripts are never evicted;
a SCRIPT LOAD of a script EVAL created leaves it evictable (7.4.1); a run
by EVAL or EVALSHA makes a script the newest; a refused run (EVAL_RO of a
writing script) does not; a body that does not compile is not cached.

The scenarios' figures must be 7.4.1's: from a live 7.4.1 when
utils/dev/redis74-ref.sh provides one, else from the transcript
transcripts/script_eviction_74.json.gz (utils/dev/gen-74-transcripts.py
records it; CI has no 7.4.1).  The memory bound is checked on ours alone."""
import hashlib

import pytest
import redis

from ref74 import Ref74

pytestmark = pytest.mark.differential


def sha(body):
    return hashlib.sha1(body.encode()).hexdigest()


def figures(c):
    info = c.info()
    return [info["evicted_scripts"], info["number_of_cached_scripts"]]


def call(c, *args):
    try:
        r = c.execute_command(*args)
        return r.decode() if isinstance(r, bytes) else r
    except redis.ResponseError as e:
        return "%s: %s" % (type(e).__name__, str(e).split(" script:")[0])  # NoScriptError: ...


def evals(c, prefix, n):
    for i in range(n):
        c.eval("return '%s%d'" % (prefix, i), 0)


def scenario_thousand(c):
    """1000 distinct EVALs: the first 500 are gone, SCRIPT LOAD's stays."""
    out = []
    loaded = c.script_load("return 'loaded'")
    evals(c, "a", 1000)
    out.append(figures(c))
    out.append(c.script_exists(sha("return 'a0'"), sha("return 'a499'"), sha("return 'a500'"),
                               sha("return 'a999'"), loaded))
    out.append(call(c, "EVALSHA", sha("return 'a0'"), 0))
    out.append(call(c, "EVALSHA", sha("return 'a999'"), 0))
    out.append(call(c, "EVALSHA", loaded, 0))
    out.append(figures(c))
    return out


WRITER = "#!lua\nreturn redis.call('set','k','v')"  # flags declared: EVAL_RO refuses it before the run


def scenario_lru(c):
    """A run by EVALSHA or EVAL makes a script the newest; SCRIPT LOAD of
    an EVAL script does not pin it; a refused run (EVAL_RO of a writer)
    leaves its place; a compile error caches nothing."""
    out = []
    evals(c, "b", 500)
    out.append(figures(c))
    c.evalsha(sha("return 'b0'"), 0)  # b0 newest
    c.eval("return 'b1'", 0)  # b1 newest
    c.script_load("return 'b2'")  # b2 stays the oldest
    c.eval(WRITER, 0)  # created: b2 evicted
    c.eval("return 'b3'", 0)  # b3 newest
    out.append(call(c, "EVAL_RO", WRITER, 0))  # refused: the writer keeps its place
    out.append(call(c, "EVAL", "return (", 0))  # not cached
    out.append(figures(c))
    evals(c, "new", 4)  # b4 ... b7 go
    out.append(figures(c))
    out.append(c.script_exists(*[sha("return 'b%d'" % i) for i in range(10)]))
    out.append(call(c, "EVALSHA", sha("return 'b2'"), 0))
    # b8 ... b499 go, then b0, b1 and the writer: the refused EVAL_RO did
    # not make it newer than b3, which stays
    evals(c, "more", 495)
    out.append(c.script_exists(sha(WRITER), sha("return 'b0'"), sha("return 'b1'"), sha("return 'b3'")))
    out.append(figures(c))
    return out


def scenario_flush_and_reset(c):
    """SCRIPT FLUSH empties the list; the counter is a stat: CONFIG
    RESETSTAT clears it."""
    out = []
    evals(c, "c", 520)
    out.append(figures(c))
    c.script_flush()
    out.append(figures(c))
    evals(c, "d", 500)
    out.append(figures(c))
    c.eval("return 'd-extra'", 0)
    out.append(figures(c))
    c.config_resetstat()
    out.append(figures(c))
    return out


SCENARIOS = {"thousand": scenario_thousand, "lru": scenario_lru, "flush_and_reset": scenario_flush_and_reset}


@pytest.fixture(scope="module")
def ref():
    r = Ref74("script_eviction")
    yield r
    r.stop()


def fresh(port_client):
    c = port_client
    c.script_flush()
    c.config_resetstat()
    c.flushall()
    return c


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_eviction_is_74s(server, ref, name):
    ours = SCENARIOS[name](fresh(server.client(decode_responses=True)))

    def live():
        return SCENARIOS[name](fresh(redis.Redis(port=ref.port, decode_responses=True)))
    assert ours == ref.reply(["scenario", name], live)


def test_thousand_evals_figures(server):
    """The figures the issue names, asserted outright as well."""
    out = scenario_thousand(fresh(server.client(decode_responses=True)))
    assert out[0] == [500, 501]
    assert out[1] == [False, False, True, True, True]
    assert out[2] == "NoScriptError: No matching script. Please use EVAL."
    assert out[3] == "a999"
    assert out[4] == "loaded"


def test_script_load_never_evicted(server):
    c = fresh(server.client(decode_responses=True))
    loaded = [c.script_load("return 'keep%d'" % i) for i in range(600)]
    evals(c, "e", 1200)
    assert figures(c) == [700, 1100]
    assert all(c.script_exists(*loaded))
    assert c.evalsha(loaded[0], 0) == "keep0"


def test_memory_is_bounded(server):
    """Evicted scripts give their body and function back: the cache's
    figures stop growing once 500 EVAL scripts are kept."""
    c = fresh(server.client(decode_responses=True))
    pad = "x" * 500

    def run(tag, n):
        for i in range(n):
            c.eval("local s = '%s%s%d' return #s" % (pad, tag, i), 0)
        info = c.info("memory")
        return info["used_memory_scripts_eval"], info["used_memory_lua"]

    scripts1, lua1 = run("f", 2000)
    scripts2, lua2 = run("g", 4000)
    assert c.info("stats")["evicted_scripts"] == 5500
    assert c.info("memory")["number_of_cached_scripts"] == 500
    assert scripts1 > 500 * 500  # the 500 bodies are counted
    assert scripts2 <= scripts1 * 1.1
    assert lua2 < lua1 * 2  # the Lua GC took the evicted functions (6000 kept would be ~3x)
    c.script_flush()
    assert c.info("memory")["number_of_cached_scripts"] == 0
