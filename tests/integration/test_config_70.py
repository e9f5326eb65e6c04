"""CONFIG GET against Debian's redis-server 7.0.15: every default, every
alias name, patterns over both names.

Both servers start with the same command line (conftest: port, bind, save,
dir).  Every parameter both have must have the same default, except the
deliberate differences listed in DIFFERENT (and in docs/configuration.md); the names only
Redis has are listed by reason in MISSING, so the test fails both when a
default drifts and when a parameter is added or dropped without updating
the lists.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_config_70.py"""
import pytest
import redis

from conftest import REDIS_SERVER

pytestmark = pytest.mark.differential

# Parameters Redis 7.0.15 has and redis-like does not, by reason.
MISSING = {
    "process and OS settings not implemented": """crash-memcheck-enabled""",
    "server behaviour not implemented": """io-threads io-threads-do-reads""",
}

# Parameters only redis-like has: Redis 7.2's listpack sets, the socket engine,
# defrag's floor in percent.
EXTRA = {"set-max-listpack-entries", "set-max-listpack-value", "io-engine",
         "active-defrag-ignore-percent"}  # issue 49: a floor that scales with the data

# Redis 7.2/7.4's parameters (test_config_74.py compares them with 7.4.1).
LATER_74 = {"hide-user-data-from-log", "locale-collate", "max-new-connections-per-cycle",
            "max-new-tls-connections-per-cycle", "server-cpulist", "bio-cpulist", "aof-rewrite-cpulist",
            "bgsave-cpulist"}

# Same parameter, deliberately another default (docs/configuration.md).
DIFFERENT = {
    "dir": "each server's own test directory",
    "port": "each server's own port",
}

# Redis 7.0's alternative names whose parameter exists here.
ALIASES = {
    "hash-max-ziplist-entries": "hash-max-listpack-entries",
    "hash-max-ziplist-value": "hash-max-listpack-value",
    "zset-max-ziplist-entries": "zset-max-listpack-entries",
    "zset-max-ziplist-value": "zset-max-listpack-value",
    "list-max-ziplist-size": "list-max-listpack-size",
    "lua-time-limit": "busy-reply-threshold",
}


def missing_names():
    names = set()
    for group in MISSING.values():
        names |= set(group.split())
    return names


@pytest.fixture(scope="module")
def both(server, redis_ref):
    return server.client(), redis_ref.client()


def test_every_default_matches_redis(start_server):
    ours = start_server(args=("--enable-debug-command", "no")).client()   # conftest enables it
    ref = start_server(binary=REDIS_SERVER).client()
    mine, theirs = ours.config_get("*"), ref.config_get("*")
    assert set(theirs) - set(mine) == missing_names()
    assert set(mine) - set(theirs) == EXTRA | LATER_74
    allocator = ours.info("memory")["mem_allocator"]
    different = dict(DIFFERENT)
    if allocator.startswith(("ebbmalloc", "jemalloc")):
        different["activedefrag"] = "on by default with ebbmalloc and jemalloc (docs/configuration.md)"
    for name in sorted(set(mine) & set(theirs)):
        if name in different:
            continue
        assert mine[name] == theirs[name], (name, mine[name], theirs[name])
    # The listed differences are real (a stale entry fails).
    for name in different:
        assert mine[name] != theirs[name], name


def test_aliases_answer_as_in_redis(both):
    ours, ref = both
    for alias, name in ALIASES.items():
        assert ours.config_get(alias) == ref.config_get(alias) == {alias: ref.config_get(name)[name]}
    for pattern in ("*ziplist*", "hash-max*", "zset-max-*", "list-max-*", "lua-*", "busy-*"):
        assert ours.config_get(pattern) == ref.config_get(pattern), pattern
    # Setting either name changes both.
    try:
        for c in (ours, ref):
            assert c.config_set("hash-max-ziplist-entries", 77)
            assert c.config_get("hash-max-listpack-entries") == {"hash-max-listpack-entries": "77"}
            assert c.config_set("zset-max-listpack-value", 33)
            assert c.config_get("zset-max-ziplist-value") == {"zset-max-ziplist-value": "33"}
            assert c.config_set("lua-time-limit", 4000)
            assert c.config_get("busy-reply-threshold") == {"busy-reply-threshold": "4000"}
        mine = {k: v for k, v in ours.config_get("*max-*").items() if k not in EXTRA | LATER_74}
        theirs = {k: v for k, v in ref.config_get("*max-*").items() if k not in missing_names()}
        assert mine == theirs
    finally:
        for c in (ours, ref):
            c.config_set("hash-max-listpack-entries", 512)
            c.config_set("zset-max-listpack-value", 64)
            c.config_set("busy-reply-threshold", 5000)


def test_several_patterns_and_repeats(both):
    ours, ref = both
    for args in (("hash-max-ziplist-entries", "hash-max-listpack-entries"), ("hz", "hz", "h*"),
                 ("nosuch",), ("latency-tracking*", "lua-time-limit")):
        mine, theirs = ours.execute_command("CONFIG", "GET", *args), ref.execute_command("CONFIG", "GET", *args)
        later = [i for i in range(0, len(mine), 2) if mine[i] in LATER_74]
        mine = [x for i in range(0, len(mine), 2) if i not in later for x in mine[i:i + 2]]
        assert len(mine) == len(theirs), args                 # each name once, as in Redis
        assert dict(zip(mine[0::2], mine[1::2])) == dict(zip(theirs[0::2], theirs[1::2])), args


CONFIG_SETS = [
    ("hz", "11", "hz", "12"),                          # duplicate
    ("hz", "abc", "hz", "5"),                          # duplicate before the bad value
    ("hz", "12", "maxclients", "abc"),                 # bad value: nothing is set
    ("hz", "11", "nosuch", "5"),
    ("hz", "11", "daemonize", "yes"),                  # immutable
    ("hz", "11", "hz"),                                # odd count
    ("hash-max-ziplist-entries", "5", "hash-max-listpack-entries", "6"),   # two names of one parameter
    ("maxmemory-policy", "allkeys-lru", "active-expire-effort", "11"),   # out of range
    ("latency-tracking-info-percentiles", "50", "latency-tracking", "maybe"),
]


def test_config_set_checks_everything_first(both):
    ours, ref = both
    try:
        for args in CONFIG_SETS:
            got = []
            for c in (ours, ref):
                try:
                    got.append(("ok", c.execute_command("CONFIG", "SET", *args)))
                except Exception as e:
                    got.append(("err", str(e)))
            assert got[0] == got[1], args
            names = sorted(set(args[0::2]))
            assert {n: ours.config_get(n) for n in names} == {n: ref.config_get(n) for n in names}, args
    finally:
        for c in (ours, ref):
            c.config_set("hz", 10)
            c.config_set("hash-max-listpack-entries", 512)
            c.config_set("maxmemory-policy", "noeviction")
            c.config_set("latency-tracking-info-percentiles", "50 99 99.9")


@pytest.mark.parametrize("name", ["loglevel", "appendfsync", "maxmemory-policy", "sanitize-dump-payload",
                                  "acl-pubsub-default", "repl-diskless-load",
                                  "propagation-error-behavior", "oom-score-adj"])
def test_enum_error_lists_the_values_like_redis(both, name):
    # Redis names the allowed values, in its own order.
    errors = []
    for c in both:
        with pytest.raises(redis.ResponseError) as e:
            c.config_set(name, "maybe")
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    assert "must be one of the following: " in errors[0]
