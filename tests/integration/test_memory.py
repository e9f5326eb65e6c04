"""INFO memory and the MEMORY command: every field present, the figures
consistent with each other (each ratio is the documented quotient of the
printed figures), and used_memory following the data: it grows by about the
payload when 100k keys are written and falls back after FLUSHALL."""
import re
import time

import pytest
import redis

from conftest import memory_stats

FIELDS = ["used_memory", "used_memory_human", "used_memory_rss", "used_memory_rss_human", "used_memory_peak",
          "used_memory_peak_human", "used_memory_peak_perc", "used_memory_overhead", "used_memory_startup",
          "used_memory_dataset", "used_memory_dataset_perc", "allocator_allocated", "allocator_active",
          "allocator_resident", "total_system_memory", "maxmemory", "maxmemory_human", "maxmemory_policy",
          "allocator_frag_ratio", "allocator_frag_bytes", "allocator_rss_ratio", "allocator_rss_bytes",
          "rss_overhead_ratio", "rss_overhead_bytes", "mem_fragmentation_ratio", "mem_fragmentation_bytes",
          "mem_allocator"]


def mem_info(c):
    """INFO memory as raw strings (redis-py would turn 1.00 into a float and
    "12.5%" into a string inconsistently)."""
    conn = c.connection_pool.get_connection("INFO")
    try:
        conn.send_command("INFO", "memory")
        text = conn.read_response()
    finally:
        c.connection_pool.release(conn)
    text = text.decode() if isinstance(text, bytes) else text
    assert text.startswith("# Memory\r\n")
    return dict(line.split(":", 1) for line in text.split("\r\n")[1:] if line)


def quiet_info(c, timeout=3.0):
    """INFO memory once the server is quiet: the cron (hz 10) samples RSS and
    allocator figures, and may still be finishing an incremental rehash after
    a burst of writes, so wait until used_memory stops moving."""
    time.sleep(0.15)
    m = mem_info(c)
    deadline = time.time() + timeout
    while time.time() < deadline:
        time.sleep(0.15)
        n = mem_info(c)
        sampled = int(n["used_memory_rss"]) - int(n["mem_fragmentation_bytes"])
        if abs(int(n["used_memory"]) - int(m["used_memory"])) < 16 * 1024 and \
                abs(sampled - int(n["used_memory"])) < 64 * 1024:
            return n
        m = n
    return m


@pytest.fixture
def mserver(start_server):
    return start_server()


def test_all_fields_present_and_formatted(mserver):
    m = mem_info(mserver.client())
    for f in FIELDS:
        assert f in m, f
    human = re.compile(r"^\d+(\.\d\d)?[BKMGTP]$")
    for f in ("used_memory", "used_memory_rss", "used_memory_peak", "total_system_memory", "maxmemory"):
        assert m[f].isdigit(), f
        assert human.match(m[f + "_human"]), (f, m[f + "_human"])
    for f in ("used_memory_peak_perc", "used_memory_dataset_perc"):
        assert re.match(r"^\d+\.\d\d%$", m[f]), (f, m[f])
    for f in ("allocator_frag_ratio", "allocator_rss_ratio", "rss_overhead_ratio", "mem_fragmentation_ratio"):
        assert re.match(r"^\d+\.\d\d$", m[f]), (f, m[f])
    assert m["maxmemory_policy"] == "noeviction"
    assert re.match(r"^(libc|jemalloc-\d+\.\d+\.\d+|tcmalloc-\d+\.\d+|tcmalloc_minimal-\d+\.\d+|ebbmalloc-\S+)$",
                    m["mem_allocator"])
    assert int(m["used_memory_rss"]) > 0
    assert int(m["total_system_memory"]) > int(m["used_memory_rss"])


def human_to_bytes(h):
    if h.endswith("B"):
        return float(h[:-1])
    return float(h[:-1]) * 1024 ** ("KMGTP".index(h[-1]) + 1)


def check_consistency(m):
    used, peak = int(m["used_memory"]), int(m["used_memory_peak"])
    rss, startup = int(m["used_memory_rss"]), int(m["used_memory_startup"])
    overhead, dataset = int(m["used_memory_overhead"]), int(m["used_memory_dataset"])
    assert peak >= used > 0
    assert 0 < startup <= used
    assert startup <= overhead <= used
    assert dataset == used - overhead
    assert abs(float(m["used_memory_peak_perc"][:-1]) - used * 100 / peak) <= 0.01
    assert abs(float(m["used_memory_dataset_perc"][:-1]) - dataset * 100 / (used - startup)) <= 0.01
    for f in ("used_memory", "used_memory_rss", "used_memory_peak"):
        v = int(m[f])
        assert abs(human_to_bytes(m[f + "_human"]) - v) <= max(v * 0.005, 1), f
    alloc, active, resident = int(m["allocator_allocated"]), int(m["allocator_active"]), int(m["allocator_resident"])

    def quotient(num, den, field):
        want = num / den if num and den else 0
        assert abs(float(m[field]) - want) <= 0.006, (field, m[field], want)

    quotient(active, alloc, "allocator_frag_ratio")
    quotient(resident, active, "allocator_rss_ratio")
    quotient(rss, resident, "rss_overhead_ratio")
    if active and alloc:
        assert int(m["allocator_frag_bytes"]) == active - alloc
    if resident and active:
        assert int(m["allocator_rss_bytes"]) == resident - active
    if rss and resident:
        assert int(m["rss_overhead_bytes"]) == rss - resident
    # mem_fragmentation_* divide the RSS less the io_uring engine's buffers
    # (mem_io_buffers, memory of their own: docs/memory.md) by used_memory,
    # all sampled together in the cron: the sample is rss - io -
    # mem_fragmentation_bytes and must be close to the used_memory printed
    # now (the client is idle).
    io = int(m["mem_io_buffers"])
    sampled_used = rss - io - int(m["mem_fragmentation_bytes"])
    assert abs(sampled_used - used) <= max(used * 0.02, 64 * 1024), (sampled_used, used)
    quotient(rss - io, sampled_used, "mem_fragmentation_ratio")
    lib = m["mem_allocator"]
    if lib.startswith("jemalloc") or lib.startswith("ebbmalloc"):
        assert 0 < alloc <= active <= resident
    if lib == "libc":
        assert active == 0 and resident == 0, "glibc cannot tell these: reported as 0"
        assert m["allocator_frag_ratio"] == "0.00"


def test_figures_are_self_consistent(mserver):
    c = mserver.client()
    check_consistency(quiet_info(c))
    c.mset({"k%d" % i: "x" * 100 for i in range(1000)})
    check_consistency(quiet_info(c))


def test_used_memory_follows_the_data(mserver):
    c = mserver.client()
    base = int(quiet_info(c)["used_memory"])
    n, vlen = 100000, 100
    value = "v" * vlen
    for start in range(0, n, 2000):
        c.mset({"key:%08d" % i: value for i in range(start, start + 2000)})
    assert c.dbsize() == n
    full = quiet_info(c)
    grown = int(full["used_memory"]) - base
    payload = n * (12 + vlen)
    assert payload <= grown <= payload * 2.5, (grown, payload)
    check_consistency(full)
    assert int(full["used_memory_dataset"]) >= n * vlen
    assert int(full["used_memory_peak"]) >= int(full["used_memory"])
    assert int(full["used_memory_rss"]) >= payload
    c.flushall()
    after = quiet_info(c)
    assert int(after["used_memory"]) - base < 256 * 1024, (after["used_memory"], base)
    assert int(after["used_memory_peak"]) >= base + payload, "the peak remembers the high-water mark"
    check_consistency(after)
    stats_ops = c.info("stats")["total_commands_processed"]
    assert stats_ops >= n // 2000


def test_memory_usage(r):
    r.set("small", "x")
    r.set("big", "x" * 10000)
    small, big = r.memory_usage("small"), r.memory_usage("big")
    assert 0 < small < 200
    assert 10000 < big < 10000 * 1.3
    assert r.memory_usage("nope") is None
    assert r.memory_usage("big", samples=0) == big
    with pytest.raises(redis.ResponseError, match="syntax error"):
        r.execute_command("MEMORY", "USAGE", "big", "FOO")


def test_memory_stats(r):
    r.mset({"k%d" % i: "v" for i in range(100)})
    r.set("e", "v", ex=100)
    st = memory_stats(r)
    for f in ("peak.allocated", "total.allocated", "startup.allocated", "clients.normal", "overhead.total",
              "keys.count", "keys.bytes-per-key", "dataset.bytes", "dataset.percentage", "peak.percentage",
              "allocator.allocated", "allocator.active", "allocator.resident", "allocator-fragmentation.ratio",
              "allocator-rss.ratio", "rss-overhead.ratio", "fragmentation", "fragmentation.bytes"):
        assert f in st, f
    assert st["keys.count"] == 101
    assert st["db.0"]["overhead.hashtable.main"] > 0 and st["db.0"]["overhead.hashtable.expires"] > 0
    assert st["peak.allocated"] >= st["total.allocated"] >= st["startup.allocated"]
    used = r.info("memory")["used_memory"]
    assert abs(st["total.allocated"] - used) < 64 * 1024
    assert st["dataset.bytes"] == st["total.allocated"] - st["overhead.total"]


def test_memory_purge_doctor_malloc_stats(r):
    r.mset({"p%d" % i: "x" * 500 for i in range(5000)})
    r.flushall()
    before = quiet_info(r)
    assert r.memory_purge() is True
    after = mem_info(r)
    lib = after["mem_allocator"]
    if lib.startswith("jemalloc"):
        assert int(after["allocator_resident"]) <= int(before["allocator_resident"])
    doctor = r.execute_command("MEMORY", "DOCTOR")
    doctor = doctor.decode() if isinstance(doctor, bytes) else doctor
    assert len(doctor) > 20
    stats = r.execute_command("MEMORY", "MALLOC-STATS")
    stats = stats.decode() if isinstance(stats, bytes) else stats
    marker = {"jemalloc": "jemalloc", "libc": "<malloc", "tcmalloc": "MALLOC:", "tcmalloc_minimal": "MALLOC:",
              "ebbmalloc": "ebbmalloc"}[lib.split("-")[0]]
    assert marker in stats
    with pytest.raises(redis.ResponseError, match="unknown subcommand"):
        r.execute_command("MEMORY", "NOPE")


def test_doctor_on_a_larger_instance(mserver):
    c = mserver.client()
    for start in range(0, 60000, 2000):
        c.mset({"d:%d" % i: "x" * 100 for i in range(start, start + 2000)})
    text = c.execute_command("MEMORY", "DOCTOR")
    text = text.decode() if isinstance(text, bytes) else text
    assert "less than 5 MB" not in text
    assert "used" in text and "resident" in text
