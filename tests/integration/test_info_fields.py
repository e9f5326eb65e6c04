"""INFO's field names and the counters Redis 7.0 added, against Debian's
redis-server 7.0.15.

Every field Redis's INFO EVERYTHING has (per-command, per-error and
per-database lines aside) must be in ours, in the same section; and the
ones with a meaning here must mean it: replication's own bytes
(total_net_repl_*) on both sides of
a sync, disk-based and diskless, and inside the totals, as Redis 7.0.15
counts them; the main thread's CPU; the keys of the last RDB load."""
import os
import re
import time

import pytest

from conftest import REDIS_SERVER, SERVER
from rawresp import RawConn
from repl_helpers import wait_caught_up, wait_for, wait_link_up

pytestmark = pytest.mark.differential

BINARIES = [SERVER, REDIS_SERVER]
IDS = ["ours", "redis"]

# lines that come and go with the dataset and the workload
VARIABLE = re.compile(r"^(cmdstat_|errorstat_|latency_percentiles_usec_|db\d+$)")
# Redis 7.2's names ours has too (7.0.15 lacks them)
OURS_ONLY = {"acl_access_denied_auth", "acl_access_denied_channel", "acl_access_denied_cmd",
             "acl_access_denied_key", "redis_like_version", "io_engine",
             "expired_subkeys",  # Redis 7.4's (hash field expiry, issue 47)
             # Redis 7.2/7.4's fields (issue 47; test_r74_surface.py compares them with 7.4.1)
             "listener0", "pubsub_clients", "watching_clients", "total_watched_keys", "total_blocking_keys",
             "total_blocking_keys_on_nokey", "allocator_muzzy", "mem_overhead_db_hashtable_rehashing",
             "evicted_scripts", "client_query_buffer_limit_disconnections",
             "client_output_buffer_limit_disconnections", "eventloop_cycles", "eventloop_duration_sum",
             "eventloop_duration_cmd_sum", "instantaneous_eventloop_cycles_per_sec",
             "instantaneous_eventloop_duration_usec"}


def fields_by_section(port):
    conn = RawConn(port)
    text = conn.call("INFO", "EVERYTHING").decode()
    conn.close()
    out, section = {}, None
    for line in text.splitlines():
        if line.startswith("# "):
            section = line[2:]
            out[section] = set()
        elif ":" in line:
            name = line.split(":", 1)[0]
            if not VARIABLE.match(name):
                out[section].add(name)
    return out


def test_every_redis_field_is_there(start_server):
    ours = fields_by_section(start_server().port)
    ref = fields_by_section(start_server(binary=REDIS_SERVER).port)
    assert set(ours) >= set(ref)
    missing = {s: sorted(ref[s] - ours[s]) for s in ref if ref[s] - ours[s]}
    assert missing == {}
    extra = set().union(*ours.values()) - set().union(*ref.values())
    # io_uring_*: the engine's counters; rss_*: the parts of the RSS and
    # mem_io_buffers (issue 49, docs/memory.md)
    extra = {f for f in extra if not f.startswith(("io_uring_", "rss_"))} - OURS_ONLY - {"mem_io_buffers"}
    assert extra == set()


@pytest.mark.parametrize("diskless", ["no", "yes"])
@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_replication_bytes_are_counted_apart(start_server, binary, diskless):
    m = start_server(["--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0"], binary=binary)
    mc = m.client()
    mc.set("big", os.urandom(200000))  # LZF leaves it as it is
    before = mc.info("stats")
    r = start_server(["--replicaof", "127.0.0.1", str(m.port)], binary=binary)
    rc = r.client()
    wait_link_up(rc)
    for i in range(100):
        mc.set("k%d" % i, "v" * 1000)
    wait_caught_up(mc, rc)
    ms, rs = mc.info("stats"), rc.info("stats")

    def grew(now, name):
        return now[name] - before.get(name, 0)

    # the RDB (200 kB) and the stream (100 kB) went out as replication
    # traffic, which the totals include (Redis 7.0 counts it in both)
    assert grew(ms, "total_net_repl_output_bytes") > 300000
    assert grew(ms, "total_net_output_bytes") >= grew(ms, "total_net_repl_output_bytes")
    assert ms["total_net_repl_input_bytes"] == 0
    # the replica read them as replication traffic
    assert rs["total_net_repl_input_bytes"] > 300000
    assert rs["total_net_input_bytes"] >= rs["total_net_repl_input_bytes"]
    # less than a client's few commands apart: only replication came in
    assert rs["total_net_input_bytes"] - rs["total_net_repl_input_bytes"] < 10000
    assert rs["total_net_repl_output_bytes"] == 0


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_repl_kbps_while_streaming(start_server, binary):
    m = start_server(binary=binary)
    r = start_server(["--replicaof", "127.0.0.1", str(m.port)], binary=binary)
    mc, rc = m.client(), r.client()
    wait_link_up(rc)
    end = time.time() + 1.0
    while time.time() < end:
        mc.set("k", "v" * 20000)
    assert mc.info("stats")["instantaneous_output_repl_kbps"] > 0
    assert rc.info("stats")["instantaneous_input_repl_kbps"] > 0


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_main_thread_cpu(start_server, binary):
    c = start_server(binary=binary).client()
    for _ in range(2000):
        c.set("k", "v")
    cpu = c.info("cpu")
    assert 0 < cpu["used_cpu_user_main_thread"] + cpu["used_cpu_sys_main_thread"]
    # read a moment after the process figures: a few ms ahead at most
    assert cpu["used_cpu_user_main_thread"] <= cpu["used_cpu_user"] + 0.01
    assert cpu["used_cpu_sys_main_thread"] <= cpu["used_cpu_sys"] + 0.01


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_last_load_keys(start_server, binary):
    s = start_server(["--enable-debug-command", "yes"] if binary == REDIS_SERVER else [], binary=binary)
    c = s.client()
    assert (c.info("persistence")["rdb_last_load_keys_loaded"],
            c.info("persistence")["rdb_last_load_keys_expired"]) == (0, 0)
    for i in range(30):
        c.set("k%d" % i, i)
    for i in range(5):
        c.set("e%d" % i, i, px=300)
    c.save()
    time.sleep(0.5)
    # DEBUG RELOAD loads the RDB saved just now: 30 keys, 5 of them gone
    c.execute_command("DEBUG", "RELOAD", "NOSAVE")
    wait_for(lambda: c.info("persistence")["loading"] == 0)
    p = c.info("persistence")
    assert (p["rdb_last_load_keys_loaded"], p["rdb_last_load_keys_expired"]) == (30, 5)
    c.config_resetstat()  # a load's figures, not statistics: they stay
    p = c.info("persistence")
    assert (p["rdb_last_load_keys_loaded"], p["rdb_last_load_keys_expired"]) == (30, 5)
    assert c.info("stats")["reply_buffer_expands"] >= 0 and "reply_buffer_shrinks" in c.info("stats")


def test_client_list_rbp_is_the_reply_buffer_peak(start_server):
    """rbp: the most of the client's reply buffer a reply took (Redis's
    field; ours printed the query buffer's peak there)."""
    c = start_server().client()
    c.set("v", "x" * 5000)
    assert c.get("v") == "x" * 5000
    me = c.client_list(_type="normal")[0]
    assert int(me["rbs"]) == 16384
    assert 5000 < int(me["rbp"]) <= 16384
