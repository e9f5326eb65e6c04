"""Consumers' active times (Redis 7.2+) in RDB type 21, against Redis 7.4.1
(issue 47).

A consumer has a seen time (its last XREADGROUP, XCLAIM, XAUTOCLAIM) and an
active time (its last delivery or claim; -1 before any); since 7.2 those
commands create it even when they serve or claim nothing.  The steps below
set the times apart; the replies, the consumers, and which step last set
each time must be 7.4.1's.  A stream whose consumers' two times differ is written as type 21
(RDB version 11): DUMP, RESTORE, COPY, SAVE and a restart, DEBUG RELOAD,
an AOF's RDB preamble and full syncs keep both times exactly; a stream
whose two times agree everywhere stays 7.0's type 19 (version 10), which
loses nothing then.

7.4.1 comes from utils/dev/redis74-ref.sh when it can be built, else from
transcripts/stream_rdb_74.json.gz (ref74.py; utils/dev/gen-74-transcripts.py
re-records it): its replies to the steps, a DUMP payload of its stream
(times included, so it is fixed once recorded), what XINFO STREAM FULL says
after it RESTOREs that payload and after RESTOREing ours of the same
stream, and its SAVEd file of the steps.  Our file in 7.4.1 and full syncs
both ways with 7.4.1 run only with a live 7.4.1; without one (CI) our own
round trips are checked.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_stream_rdb_74.py"""
import os
import subprocess
import time

import pytest

import benchlib
from conftest import ROOT, wait_persistence_idle
from ref74 import Ref74, binary as ref74_binary
from repl_helpers import wait_for, wait_link_up

pytestmark = pytest.mark.differential

CHECK_RDB = os.path.join(ROOT, "src", "redis-like-check-rdb")

STEPS = [
    ["XADD", "s", "1-1", "f", "v1"],
    ["XADD", "s", "2-1", "f", "v2"],
    ["XADD", "s", "3-1", "f", "v3"],
    ["XADD", "s", "4-1", "f", "v4"],
    ["XADD", "s", "5-1", "f", "v5"],
    ["XADD", "s", "6-1", "f", "v6"],
    ["XGROUP", "CREATE", "s", "g", "0"],
    ["XGROUP", "CREATECONSUMER", "s", "g", "never"],                      # seen; active -1
    ["XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"],  # both
    ["XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "STREAMS", "s", ">"],
    ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"],            # its own history
    ["XCLAIM", "s", "g", "carol", "0", "9-9"],                             # nothing to claim
    ["XCLAIM", "s", "g", "bob", "0", "1-1"],                               # claims alice's entry
    ["XAUTOCLAIM", "s", "g", "dave", "0", "0-0", "COUNT", "1"],
    ["XAUTOCLAIM", "s", "g", "erin", "0", "9-0"],                          # nothing left past 9-0
    ["XREADGROUP", "GROUP", "g", "frank", "COUNT", "3", "STREAMS", "s", ">"],
    ["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"],            # nothing new
    ["XCLAIM", "s", "g", "frank", "0", "6-1", "JUSTID"],                   # its own entry
    ["XGROUP", "CREATE", "s", "g2", "$"],
    ["XREADGROUP", "GROUP", "g2", "zed", "STREAMS", "s", ">"],             # nothing: zed is created, seen
    ["XREADGROUP", "GROUP", "g2", "wai", "BLOCK", "20", "STREAMS", "s", ">"],  # created as it blocks
    ["XREADGROUP", "GROUP", "g2", "yan", "NOACK", "STREAMS", "s", "0"],
]


def raw(c):
    """The client with redis-py's reply parsing off: replies as sent."""
    c.response_callbacks.clear()
    return c


def run_steps(c):
    """Run STEPS a few ms apart; returns (replies, the server's TIME in ms
    before each step)."""
    replies, marks = [], []
    for cmd in STEPS:
        time.sleep(0.004)
        sec, usec = c.execute_command("TIME")
        marks.append(int(sec) * 1000 + int(usec) // 1000)
        replies.append(plain(c.execute_command(*cmd)))
    time.sleep(0.004)
    return replies, marks


def plain(x):
    """A reply as JSON-able lists, strings and ints (bytes decoded)."""
    if isinstance(x, bytes):
        return x.decode("latin-1")
    if isinstance(x, (list, tuple)):
        return [plain(y) for y in x]
    if isinstance(x, dict):
        return [[plain(k), plain(v)] for k, v in x.items()]
    return x


def full(c, key="s"):
    return plain(c.execute_command("XINFO", "STREAM", key, "FULL"))


def step_of(t, marks):
    """The step whose command set time t (-1 stays -1)."""
    if t == -1:
        return -1
    return max(i for i, m in enumerate(marks) if m <= t)


def to_steps(x, marks):
    """XINFO STREAM FULL with every time replaced by the step that set it."""
    if isinstance(x, list):
        out = []
        for j, v in enumerate(x):
            if j % 2 == 1 and x[j - 1] in ("seen-time", "active-time") and isinstance(v, int):
                out.append(step_of(v, marks))
            elif isinstance(v, list) and len(v) == 4 and isinstance(v[2], int) and isinstance(v[0], str) \
                    and "-" in v[0] and v[2] > 10 ** 12:   # a PEL row: id, consumer, delivery time, count
                out.append([v[0], v[1], step_of(v[2], marks), v[3]])
            elif isinstance(v, list) and len(v) == 3 and isinstance(v[1], int) and v[1] > 10 ** 12:
                out.append([v[0], step_of(v[1], marks), v[2]])      # a consumer's PEL row
            else:
                out.append(to_steps(v, marks))
        return out
    return x


def consumers(c, group, key="s"):
    """XINFO CONSUMERS: name, pending, idle, inactive."""
    return [dict(zip(row[0::2], row[1::2])) for row in plain(c.execute_command("XINFO", "CONSUMERS", key, group))]


def times(c, key="s"):
    """{(group, consumer): (seen-time, active-time)} from XINFO STREAM FULL."""
    out = {}
    info = full(c, key)
    groups = info[info.index("groups") + 1]
    for g in groups:
        g = dict(zip(g[0::2], g[1::2]))
        for cons in g["consumers"]:
            cons = dict(zip(cons[0::2], cons[1::2]))
            out[(g["name"], cons["name"])] = (cons["seen-time"], cons["active-time"])
    return out


def check_idle_inactive(c, key, want_times):
    """XINFO CONSUMERS' idle and inactive are now minus the seen and active
    times (inactive -1 for a consumer never active), as 7.4.1 computes them."""
    sec, usec = c.execute_command("TIME")
    now = int(sec) * 1000 + int(usec) // 1000
    for group in sorted({g for g, _ in want_times}):
        for row in consumers(c, group, key):
            seen, active = want_times[(group, row["name"])]
            assert abs(row["idle"] - (now - seen)) <= 50, row
            if active == -1:
                assert row["inactive"] == -1, row
            else:
                assert abs(row["inactive"] - (now - active)) <= 50, row


@pytest.fixture(scope="module")
def ref():
    r = Ref74("stream_rdb")
    yield r
    r.stop()


@pytest.fixture(scope="module")
def scenario_74(ref):
    """7.4.1's replies to STEPS and its XINFO STREAM FULL in steps."""
    def live():
        c = raw(ref.server.client(decode_responses=False))
        c.flushall()
        replies, marks = run_steps(c)
        return {"replies": replies, "full": to_steps(full(c), marks)}
    return ref.reply(["scenario"], live)


def test_steps_set_seen_and_active_times_as_74(server, scenario_74):
    c = raw(server.client(decode_responses=False))
    c.flushall()
    replies, marks = run_steps(c)
    assert replies == scenario_74["replies"]
    assert to_steps(full(c), marks) == scenario_74["full"]


def test_dump_is_type_21_and_restore_copy_reload_keep_times(server):
    c = raw(server.client(decode_responses=False))
    c.flushall()
    run_steps(c)
    want, want_full = times(c), full(c)
    assert any(s != a for s, a in want.values())
    p = c.dump("s")
    assert p[0] == 21 and p[-10:-8] == b"\x0b\x00"      # type 21, RDB version 11
    assert c.restore("r", 0, p)
    assert full(c, "r") == want_full and times(c, "r") == want
    check_idle_inactive(c, "r", want)
    assert c.copy("s", "cp")
    assert times(c, "cp") == want
    c.execute_command("DEBUG", "RELOAD")
    assert full(c) == want_full and times(c, "r") == want and times(c, "cp") == want
    check_idle_inactive(c, "s", want)
    # A group-less stream, and one whose consumers' times agree: 7.0's 19.
    c.xadd("plain", {"a": "1"}, id="1-1")
    assert c.dump("plain")[0] == 19 and c.dump("plain")[-10:-8] == b"\x0a\x00"
    c.xgroup_create("plain", "g", id="0")
    c.xreadgroup("g", "one", {"plain": ">"})
    t = times(c, "plain")
    if t[("g", "one")][0] == t[("g", "one")][1]:
        assert c.dump("plain")[0] == 19


def saved_version(path):
    with open(path, "rb") as f:
        return f.read(9)


def test_save_restart_and_full_sync_keep_times(start_server, tmp_path):
    a = start_server(["--dir", str(tmp_path), "--save", ""])
    c = raw(a.client(decode_responses=False))
    run_steps(c)
    c.xadd("plain", {"a": "1"}, id="1-1")
    want, want_full = times(c), full(c)
    c.save()
    path = os.path.join(str(tmp_path), "dump.rdb")
    assert saved_version(path) == b"REDIS0011"
    chk = subprocess.run([CHECK_RDB, path], capture_output=True, text=True, timeout=60)
    assert chk.returncode == 0, chk.stdout + chk.stderr
    b = start_server(["--dir", str(tmp_path), "--save", ""])
    bc = raw(b.client(decode_responses=False))
    assert full(bc) == want_full and times(bc) == want
    # full sync, disk and diskless
    for diskless in ("no", "yes"):
        a.client().config_set("repl-diskless-sync", diskless)
        a.client().config_set("repl-diskless-sync-delay", 0)
        rep = start_server(["--replicaof", "127.0.0.1", str(a.port)])
        rc = raw(rep.client(decode_responses=False))
        wait_link_up(rep.client())
        assert full(rc) == want_full and times(rc) == want
        rep.stop()
        wait_persistence_idle(a.client())
    # An AOF whose base is an RDB preamble (aof-use-rdb-preamble yes).
    a.client().config_set("appendonly", "yes")
    wait_persistence_idle(a.client())
    c.execute_command("DEBUG", "LOADAOF")
    assert full(c) == want_full and times(c) == want
    a.client().config_set("appendonly", "no")
    # Without such consumers the file stays 7.0's version 10.
    c.delete("s")
    wait_persistence_idle(a.client())
    c.save()
    assert saved_version(path) == b"REDIS0010"


def test_74_payload_restores_here_and_ours_there(server, ref):
    """7.4.1's payload of the stream RESTOREs here with its exact times;
    ours of it (type 21 too, RDB version 11 where 7.4.1 says 12; the LZF of
    the node may differ) RESTOREs in 7.4.1 the same."""
    c = raw(server.client(decode_responses=False))

    def live_dump():
        rc = raw(ref.server.client(decode_responses=False))
        rc.flushall()
        run_steps(rc)
        p = rc.dump("s")
        rc.delete("s")
        rc.restore("s", 0, p)
        return {"payload": p.hex(), "full": full(rc)}
    theirs = ref.reply(["dump"], live_dump)
    p74 = bytes.fromhex(theirs["payload"])
    assert p74[0] == 21 and p74[-10:-8] == b"\x0c\x00"
    c.flushall()
    assert c.restore("s", 0, p74)
    assert full(c) == theirs["full"]
    check_idle_inactive(c, "s", times(c))
    ours = c.dump("s")
    assert ours[0] == 21 and ours[-10:-8] == b"\x0b\x00"

    def live_restore():
        rc = raw(ref.server.client(decode_responses=False))
        rc.delete("o")
        rc.restore("o", 0, ours)
        return {"payload": ours.hex(), "full": full(rc, "o")}
    got = ref.reply(["restore-ours"], live_restore)
    assert got["payload"] == ours.hex()   # (from a transcript: 7.4.1 restored these very bytes)
    assert got["full"] == theirs["full"]


def test_74_rdb_file_loads_here(start_server, ref, tmp_path):
    """7.4.1's SAVEd file of the stream (RDB 12, type 21; recorded with its
    XINFO STREAM FULL) loads here with every time, and our check tool
    accepts it; saved again here it says version 11 and loads the same."""
    def live_file():
        d = tmp_path / "rec"
        d.mkdir()
        r74 = benchlib.Server(ref74_binary(), ["--dir", str(d), "--save", ""], timeout=30, wait="any",
                              prefix="rl-test74-")
        try:
            rc = raw(r74.client(decode_responses=False))
            run_steps(rc)
            rc.save()
            return {"rdb": (d / "dump.rdb").read_bytes().hex(), "full": full(rc)}
        finally:
            r74.stop()
    rec = ref.reply(["rdb-file"], live_file)
    d = tmp_path / "ours"
    d.mkdir()
    path = d / "dump.rdb"
    path.write_bytes(bytes.fromhex(rec["rdb"]))
    assert saved_version(path) == b"REDIS0012"
    chk = subprocess.run([CHECK_RDB, str(path)], capture_output=True, text=True, timeout=60)
    assert chk.returncode == 0, chk.stdout + chk.stderr
    a = start_server(["--dir", str(d), "--save", ""])
    c = raw(a.client(decode_responses=False))
    assert full(c) == rec["full"]
    c.save()
    assert saved_version(path) == b"REDIS0011"
    b = start_server(["--dir", str(d), "--save", ""])
    assert full(raw(b.client(decode_responses=False))) == rec["full"]


def test_rdb_files_and_full_syncs_both_ways_with_74(start_server, ref, tmp_path):
    """Our SAVEd file loads in 7.4.1 and 7.4.1's in ours; each replicates
    the stream from the other through a full sync, times intact.  Only
    with a live 7.4.1: our file carries its ctime, so 7.4.1's view of it
    cannot be recorded (test_74_rdb_file_loads_here and the round trips
    through our own server run everywhere)."""
    if not ref.live:
        pytest.skip("no Redis 7.4.1 here: utils/dev/redis74-ref.sh could not build one")
    bin74 = ref74_binary()
    ours_dir, ref_dir = tmp_path / "ours", tmp_path / "ref"
    ours_dir.mkdir()
    ref_dir.mkdir()
    ours = start_server(["--dir", str(ours_dir), "--save", ""])
    oc = raw(ours.client(decode_responses=False))
    run_steps(oc)
    want, want_full = times(oc), full(oc)
    oc.save()
    os.replace(ours_dir / "dump.rdb", ref_dir / "dump.rdb")
    r74 = benchlib.Server(bin74, ["--dir", str(ref_dir), "--save", ""], timeout=30, wait="any", prefix="rl-test74-")
    try:
        rc = raw(r74.client(decode_responses=False))
        assert full(rc) == want_full and times(rc) == want
        rc.flushall()
        run_steps(rc)
        want74, full74 = times(rc), full(rc)
        rc.save()
        os.replace(ref_dir / "dump.rdb", ours_dir / "dump.rdb")
        back = start_server(["--dir", str(ours_dir), "--save", ""])
        bc = raw(back.client(decode_responses=False))
        assert full(bc) == full74 and times(bc) == want74
        # 7.4.1 master, our replica
        rep = start_server(["--replicaof", "127.0.0.1", str(r74.port)])
        wait_link_up(rep.client())
        assert full(raw(rep.client(decode_responses=False))) == full74
        rep.stop()
        # our master (ours from the file 7.4.1 wrote), a 7.4.1 replica
        rep74 = benchlib.Server(bin74, ["--save", "", "--replicaof", "127.0.0.1", str(back.port)], timeout=30,
                                wait="any", prefix="rl-test74-")
        try:
            r2 = raw(rep74.client(decode_responses=False))
            wait_for(lambda: rep74.client().info("replication").get("master_link_status") == "up",
                     what="7.4.1 replica link")
            assert full(r2) == full74 and times(r2) == want74
        finally:
            rep74.stop()
    finally:
        r74.stop()
