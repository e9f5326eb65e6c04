"""The index of the keys with a TTL (issue 20, src/ttl_index.c): a second
table of pointers to the entries that have an expire time, kept only while
such keys are rare in a database, and sampled by active expiry and the
volatile-* policies instead of the keys table.

DEBUG TTL-INDEX shows the current db's index (state none / building /
ready, its entries, the db's count of keys with a TTL) and checks it
against the keys table: every indexed pointer must be the entry the keys
table holds under that key, with a TTL, and a ready index must hold all of
them ("consistent:yes").  Under ASan a stale pointer is also a use after
free.  So each test proves the index right structurally, after every
command that adds, changes, moves or drops a TTL, and never by timing.
"""
import pytest
import redis

from diffreply import both

from repl_helpers import wait_for, wait_link_up
from conftest import memory_stats



def index_state(c):
    """{field: value} of DEBUG TTL-INDEX (numbers as int)."""
    out = {}
    for part in c.execute_command("DEBUG", "TTL-INDEX").split():
        k, v = part.split(":", 1)
        out[k] = int(v) if v.isdigit() else v
    return out


def assert_consistent(c, what=""):
    st = index_state(c)
    assert st["consistent"] == "yes", (what, st)
    if st["state"] == "ready":
        assert st["entries"] == st["expires"], (what, st)
    return st


def fill_plain(c, n, prefix="plain"):
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.set(f"{prefix}:{i}", i)
        if len(p) >= 2000:
            p.execute()
    p.execute()


@pytest.fixture
def auto(r):
    r.execute_command("DEBUG", "TTL-INDEX", "AUTO")
    yield r
    r.execute_command("DEBUG", "TTL-INDEX", "AUTO")


def test_index_follows_the_share_of_keys_with_a_ttl(auto):
    c = auto
    assert index_state(c)["state"] == "none"            # an empty db
    fill_plain(c, 5000)
    st = assert_consistent(c)
    assert (st["state"], st["entries"]) == ("ready", 0)  # built empty: exact at once
    p = c.pipeline(transaction=False)
    for i in range(100):                                 # 1 in 51: stays
        p.set(f"ttl:{i}", "v", ex=100000)
    p.execute()
    st = assert_consistent(c)
    assert (st["state"], st["entries"], st["expires"]) == ("ready", 100, 100)
    for i in range(100, 800):                            # 1 in 7.25: above 1/8, dropped
        p.set(f"ttl:{i}", "v", ex=100000)
    p.execute()
    assert index_state(c)["state"] == "none"
    for i in range(0, 500):                              # 300 left, 1 in 19: built again
        p.persist(f"ttl:{i}")
    p.execute()
    st = assert_consistent(c)
    assert (st["state"], st["entries"], st["expires"]) == ("ready", 300, 300)
    # Hysteresis: between 1/16 and 1/8 the index stays where it is.
    for i in range(0, 300):                              # 600: 1 in 9.7
        p.expire(f"ttl:{i}", 100000)
    p.execute()
    st = assert_consistent(c)
    assert (st["state"], st["entries"]) == ("ready", 600)
    c.delete(*[f"plain:{i}" for i in range(3000)])       # 2800 keys, 600 with a TTL: 1 in 4.7
    assert index_state(c)["state"] == "none"
    c.delete(*[f"plain:{i}" for i in range(3000, 5000)]) # 800 keys: too few to keep one
    assert index_state(c)["state"] == "none"


def test_all_keys_with_a_ttl_keep_no_index(auto):
    """Where every key has a TTL the index would cost a table slot per key
    (the +8 B/key target): there is none, however many keys."""
    c = auto
    p = c.pipeline(transaction=False)
    for i in range(20000):
        p.set(f"k:{i}", "v", ex=100000)
        if len(p) >= 2000:
            p.execute()
    p.execute()
    st = index_state(c)
    assert (st["state"], st["expires"], st["keys"]) == ("none", 20000, 20000)


def keyspace(c):
    return {db: (v["keys"], v.get("expires", 0)) for db, v in c.info("keyspace").items()}


# Every command that gives, changes, moves or drops a TTL; replies and
# INFO keyspace compared with Redis 7.0.15, the index checked after each.
STEPS = [
    ("SET", "a", "1"),
    ("SET", "b", "2", "EX", "10000"),
    ("EXPIRE", "a", "10000"),                 # the entry grows an expire slot: moves
    ("PEXPIREAT", "a", "99999999999999"),
    ("PERSIST", "a"),
    ("PEXPIRE", "a", "30000000"),             # the slot is reused
    ("SET", "a", "x"),                        # SET drops the TTL
    ("SET", "b", "y" * 60, "KEEPTTL"),        # a bigger value: the entry moves, TTL kept
    ("SET", "b", "z", "KEEPTTL"),             # and back to an embedded string
    ("SET", "c", "12345", "PX", "9000000"),
    ("INCR", "c"),
    ("APPEND", "c", "zz"),                    # a raw string now: the entry moves
    ("SETRANGE", "c", "1", "qq"),
    ("GETEX", "c", "PERSIST"),
    ("GETEX", "c", "EX", "5000"),
    ("SETEX", "d", "5000", "v"),
    ("PSETEX", "d", "6000000", "w"),
    ("MSET", "d", "1", "e", "2"),             # MSET drops the TTL
    ("EXPIRE", "e", "7000"),
    ("GETDEL", "e"),
    ("RPUSH", "l", "1", "2"),
    ("EXPIRE", "l", "7000"),                  # a pointer entry with a TTL
    ("LPUSH", "l", "0"),
    ("RENAME", "l", "l2"),                    # the TTL goes to a new entry
    ("SETEX", "d", "5000", "v"),
    ("RENAME", "d", "l2"),                    # over a key with a TTL
    ("COPY", "c", "c2"),
    ("COPY", "c", "c2", "REPLACE"),
    ("MOVE", "c2", "1"),                      # to db 1 with its TTL
    ("SWAPDB", "0", "1"),
    ("SWAPDB", "0", "1"),
    ("EXPIRE", "b", "-1"),                    # a past time deletes the key
    ("SET", "f", "v", "EX", "100"),
    ("DEL", "a", "c", "f"),
    ("SET", "g", "v", "EX", "100"),
    ("UNLINK", "l2", "g"),
    ("SET", "h", "1", "EX", "100000"),
]


@pytest.mark.parametrize("mode", ["AUTO", "ALWAYS"])
def test_index_consistent_through_every_ttl_command(server, redis_ref, mode):
    """5,000 keys without a TTL make the index exist under AUTO too."""
    ours, ref = server.client(), redis_ref.client()
    ours1 = server.client(db=1)
    for c in (ours, ref):
        c.flushall()
        fill_plain(c, 5000)
    ours.execute_command("DEBUG", "TTL-INDEX", mode)
    try:
        for i, step in enumerate(STEPS):
            got = both(ours, ref, step)
            assert got[0] == got[1], f"step {i} {step}: reply"
            assert keyspace(ours) == keyspace(ref), f"step {i} {step}: INFO keyspace"
            st = assert_consistent(ours, f"step {i} {step}")
            # AUTO: 5,000 keys and a few TTLs want one; a swapped-in db of
            # a few keys does not.
            assert st["state"] == ("ready" if mode == "ALWAYS" or st["keys"] >= 4096 else "none"), (step, st)
            assert_consistent(ours1, f"db1 after step {i} {step}")
        # RESTORE with a TTL, over a key and fresh.
        payload = ours.dump("h")
        ours.restore("h2", 100000, payload)
        ours.restore("h", 200000, payload, replace=True)
        assert_consistent(ours, "RESTORE")
        assert index_state(ours)["entries"] == 2
        ours.flushdb(asynchronous=True)
        assert index_state(ours)["state"] == ("ready" if mode == "ALWAYS" else "none")
        assert_consistent(ours, "FLUSHDB ASYNC")
    finally:
        ours.execute_command("DEBUG", "TTL-INDEX", "AUTO")
        for c in (ours, ref):
            c.flushall()


def test_index_survives_reload_and_defrag(auto):
    c = auto
    fill_plain(c, 6000)
    p = c.pipeline(transaction=False)
    for i in range(150):
        p.set(f"ttl:{i}", "x" * (i % 80), px=100000000)   # embedded and raw values
    for i in range(20):
        p.rpush(f"list:{i}", *range(10))
        p.expire(f"list:{i}", 100000)
    p.execute()
    st = assert_consistent(c)
    assert (st["state"], st["entries"]) == ("ready", 170)
    # Every block moves (entries included): the index must follow each.
    moved = c.execute_command("DEBUG", "DEFRAG-PASS")
    assert moved >= 6170
    st = assert_consistent(c, "after DEFRAG-PASS")
    assert (st["state"], st["entries"]) == ("ready", 170)
    assert c.execute_command("DEBUG", "RELOAD")
    st = assert_consistent(c, "after DEBUG RELOAD")
    assert (st["state"], st["entries"], st["keys"]) == ("ready", 170, 6170)
    assert 0 < c.pttl("ttl:7") <= 100000000


def test_index_built_over_a_big_table_while_it_changes(auto):
    """Forced on over 60,000 keys, 20,000 with a TTL: too many to build at
    once, so the cron builds it a millisecond per tick; meanwhile keys
    gain, lose and move TTLs, and the partial index never holds a wrong
    pointer; at the end it holds them all."""
    c = auto
    c.execute_command("DEBUG", "TTL-INDEX", "NEVER")
    p = c.pipeline(transaction=False)
    for i in range(60000):
        if i % 3 == 0:
            p.set(f"k:{i}", "v", ex=100000)
        else:
            p.set(f"k:{i}", "v")
        if len(p) >= 3000:
            p.execute()
    p.execute()
    assert index_state(c)["state"] == "none"
    c.execute_command("DEBUG", "TTL-INDEX", "ALWAYS")
    st = assert_consistent(c)
    assert st["state"] == "building"
    for i in range(0, 6000, 3):
        p.persist(f"k:{i}")                 # loses its TTL
        p.expire(f"k:{i + 1}", 5000)       # gains one (its entry moves)
        p.set(f"k:{i + 2}", "y" * 50)      # a key without one changes
        p.delete(f"k:{i + 30000}")         # a key with one goes
    p.execute()
    assert_consistent(c, "during the build")
    wait_for(lambda: index_state(c)["state"] == "ready", timeout=120, what="the index built")
    st = assert_consistent(c, "built")
    assert st["entries"] == st["expires"] == 20000 - 2000 + 2000 - 2000


def test_active_expiry_samples_the_index(auto):
    """300 short TTLs among 20,000 keys without one: the index exists and
    the cycle deletes every expired key (nothing reads them)."""
    c = auto
    fill_plain(c, 20000)
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")  # held until they are counted
    p = c.pipeline(transaction=False)
    for i in range(300):
        p.set(f"gone:{i}", "v", px=100)
    p.execute()
    st = index_state(c)
    assert (st["state"], st["entries"]) == ("ready", 300)
    before = c.info("stats")["expired_keys"]
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    wait_for(lambda: index_state(c)["expires"] == 0, timeout=60, step=0.1, what="expired keys collected")
    assert c.info("stats")["expired_keys"] - before == 300
    st = assert_consistent(c)
    assert (st["entries"], st["keys"]) == (0, 20000)


@pytest.mark.parametrize("policy", ["volatile-random", "volatile-lru", "volatile-ttl"])
def test_volatile_eviction_samples_the_index(start_server, policy):
    """1 key in 35 has a TTL (the index exists): the volatile policies
    evict those and only those, and the index loses each one."""
    s = start_server()
    c = s.client()
    p = c.pipeline(transaction=False)
    for i in range(20000):
        p.set(f"p:{i}", "x")
        if i % 34 == 0:
            p.set(f"t:{i}", "x" * 100, ex=100000)
        if len(p) >= 2000:
            p.execute()
    p.execute()
    ttl_keys = len(range(0, 20000, 34))
    st = index_state(c)
    assert (st["state"], st["entries"]) == ("ready", ttl_keys)
    c.config_set("maxmemory-policy", policy)
    c.config_set("maxmemory", str(int(c.info("memory")["used_memory"]) + 16 * 1024))
    for i in range(300):   # about 50 KB more: about 200 of the TTL keys must go
        c.set(f"n:{i}", "y" * 100)
    evicted = c.info()["evicted_keys"]
    assert 0 < evicted < ttl_keys
    assert c.exists(*[f"p:{i}" for i in range(20000)]) == 20000
    assert c.exists(*[f"n:{i}" for i in range(300)]) == 300
    st = assert_consistent(c)
    assert st["entries"] == ttl_keys - evicted


def test_replica_keeps_its_own_index(start_server):
    """A replica loads the master's RDB (its index is built as keys come)
    and, not expiring actively, follows the master's DELs: its index
    stays consistent and empties when the master's keys expire."""
    m = start_server(args=["--repl-diskless-sync-delay", "0"])   # no 5 s wait for more replicas
    mc = m.client()
    fill_plain(mc, 6000)
    p = mc.pipeline(transaction=False)
    for i in range(100):
        p.set(f"short:{i}", "v", px=3000)
        p.set(f"long:{i}", "v", ex=100000)
    p.execute()
    rs = start_server()
    rc = rs.client()
    rc.replicaof("127.0.0.1", m.port)
    wait_link_up(rc)
    st = assert_consistent(rc, "replica after sync")
    assert st["state"] == "ready" and st["keys"] >= 6100
    # The master's cycle deletes the short keys and sends DELs.
    wait_for(lambda: index_state(rc)["expires"] == 100, timeout=60, step=0.1, what="DELs on the replica")
    st = assert_consistent(rc, "replica after the DELs")
    assert (st["entries"], st["keys"]) == (100, 6100)
    assert_consistent(mc, "master")


def test_memory_stats_count_the_index(auto):
    c = auto
    fill_plain(c, 6000)
    p = c.pipeline(transaction=False)
    for i in range(150):
        p.set(f"ttl:{i}", "v", ex=100000)
    p.execute()
    assert index_state(c)["state"] == "ready"
    stats = memory_stats(c)
    db0 = stats["db.0"]
    # 8 bytes per expire time plus the index's buckets (one at least).
    assert db0["overhead.hashtable.expires"] >= 150 * 8 + 64


def test_debug_ttl_index_rejects_a_bad_mode(r):
    with pytest.raises(redis.ResponseError, match="syntax"):
        r.execute_command("DEBUG", "TTL-INDEX", "sometimes")
