"""Redis 7.0's multi-part AOF: the directory, its file names and manifest,
the upgrade of a single-file AOF, rewrites, turning AOF on at run time,
aof-use-rdb-preamble, aof-disable-auto-gc and aof-timestamp-enabled.

Redis 7.0.15 is the spec: each scenario runs on both servers and the
directories must list the same files with the same manifest, and a
directory either server wrote must load in the other (a user switches
both ways with the files as they are).  Manifest errors stop both at
start-up with the same reason."""
import os
import subprocess
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER, aof_file, aof_manifest, free_port, start_under_shim

CHECK_AOF = os.path.join(os.path.dirname(SERVER), "redis-like-check-aof")
BOTH = [SERVER, REDIS_SERVER]
DIRNAME = "appendonlydir"


def start(start_server, binary, d, *extra):
    """A server on directory d, once it has loaded its files (Redis answers
    -LOADING before that)."""
    os.makedirs(d, exist_ok=True)
    s = start_server(binary=binary, args=["--dir", str(d), "--save", ""] + list(extra))
    deadline = time.time() + 20
    while True:
        try:
            s.client().ping()
            return s
        except redis.exceptions.BusyLoadingError:
            assert time.time() < deadline, "still loading"
            time.sleep(0.05)


def listing(d, timeout=10):
    """The AOF directory's files, temp files excluded, and its manifest,
    once the files are the manifest's: both servers unlink the history
    files a rewrite leaves on a background thread, after it is done."""
    deadline = time.time() + timeout
    while True:
        names = sorted(n for n in os.listdir(os.path.join(d, DIRNAME)) if not n.startswith("temp-"))
        manifest = aof_manifest(str(d))
        listed = {f for f, _, _ in manifest}
        if set(names) - listed <= {n for n in names if n.endswith(".manifest")} or time.time() > deadline:
            return names, manifest
        time.sleep(0.02)


def wait_rewrite(r, rewrites_before, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        info = r.info("persistence")
        if info["aof_rewrites"] > rewrites_before and not info["aof_rewrite_in_progress"]:
            return info
        time.sleep(0.05)
    raise AssertionError("no rewrite finished: %r" % r.info("persistence"))


def fill(r):
    r.set("s", "v")
    r.rpush("l", *range(50))
    r.hset("h", mapping={"f%d" % i: i for i in range(20)})
    r.zadd("z", {"m%d" % i: i for i in range(20)})
    r.sadd("set", *range(30))
    r.set("ttl", "x", ex=1000)
    r.xadd("st", {"a": "1"}, id="1-1")


def dataset(r):
    out = {}
    for k in sorted(r.keys("*")):
        out[k] = (r.type(k), r.dump(k) is not None, r.ttl(k) > 0)
    out["l"] += (tuple(r.lrange("l", 0, -1)),)
    out["h"] += (tuple(sorted(r.hgetall("h").items())),)
    return out


@pytest.fixture(params=["ours", "redis"])
def pair(request):
    """(binary that writes, binary that reads) in both directions."""
    return BOTH if request.param == "ours" else BOTH[::-1]


def test_fresh_start_and_rewrite_name_the_same_files(start_server, tmp_path):
    seen = []
    for binary in BOTH:
        d = tmp_path / os.path.basename(binary)
        s = start(start_server, binary, d, "--appendonly", "yes")
        r = s.client()
        first = listing(d)
        fill(r)
        r.bgrewriteaof()
        info = wait_rewrite(r, 0)
        r.set("after", "1")
        second = listing(d)
        seen.append((first, second, sorted(k for k in info if k.startswith("aof_"))))
        s.stop()
    ours, ref = seen
    assert ours[0] == ref[0] == (
        ["appendonly.aof.1.base.rdb", "appendonly.aof.1.incr.aof", "appendonly.aof.manifest"],
        [("appendonly.aof.1.base.rdb", 1, "b"), ("appendonly.aof.1.incr.aof", 1, "i")])
    assert ours[1] == ref[1]
    assert ours[1][1] == [("appendonly.aof.2.base.rdb", 2, "b"), ("appendonly.aof.2.incr.aof", 2, "i")]
    assert ours[2] == ref[2]          # the same INFO persistence aof_* fields


def test_each_server_loads_the_others_directory(start_server, tmp_path, pair):
    writer, reader = pair
    d = tmp_path / "data"
    s = start(start_server, writer, d, "--appendonly", "yes")
    r = s.client()
    fill(r)
    r.bgrewriteaof()
    wait_rewrite(r, 0)
    r.set("in-incr", "1")              # after the rewrite: only in the incr file
    r.incr("counter")
    before = dataset(r)
    s.stop()
    s2 = start(start_server, reader, d, "--appendonly", "yes")
    r2 = s2.client()
    assert dataset(r2) == before
    assert r2.get("in-incr") == "1" and r2.get("counter") == "1"
    assert listing(d)[1][-1][2] == "i"


def test_single_file_aof_is_moved_into_the_directory(start_server, tmp_path):
    aof = b"*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$1\r\n1\r\n*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n"
    seen = []
    for binary in BOTH:
        d = tmp_path / os.path.basename(binary)
        os.makedirs(d)
        (d / "appendonly.aof").write_bytes(aof)
        s = start(start_server, binary, d, "--appendonly", "yes")
        r = s.client()
        assert (r.get("x"), r.get("n")) == ("1", "1")
        assert not (d / "appendonly.aof").exists()
        assert (d / DIRNAME / "appendonly.aof").read_bytes() == aof
        r.set("y", "2")
        seen.append(listing(d))
        s.stop()
        s = start(start_server, binary, d, "--appendonly", "yes")
        assert s.client().mget("x", "n", "y") == ["1", "1", "2"]
        s.stop()
    assert seen[0] == seen[1] == (
        ["appendonly.aof", "appendonly.aof.1.incr.aof", "appendonly.aof.manifest"],
        [("appendonly.aof", 1, "b"), ("appendonly.aof.1.incr.aof", 1, "i")])


def test_appendonly_turned_on_at_run_time(start_server, tmp_path):
    seen = []
    for binary in BOTH:
        d = tmp_path / os.path.basename(binary)
        s = start(start_server, binary, d)
        r = s.client()
        fill(r)
        r.config_set("appendonly", "yes")
        wait_rewrite(r, 0)
        r.set("later", "1")
        seen.append(listing(d))
        before = dataset(r)
        s.stop()
        s = start(start_server, binary, d, "--appendonly", "yes")
        assert dataset(s.client()) == before
        s.stop()
    assert seen[0] == seen[1]
    assert seen[0][1] == [("appendonly.aof.1.base.rdb", 1, "b"), ("appendonly.aof.1.incr.aof", 1, "i")]


def test_bgrewriteaof_with_aof_off_writes_only_a_base(start_server, tmp_path):
    seen = []
    for binary in BOTH:
        d = tmp_path / os.path.basename(binary)
        s = start(start_server, binary, d)
        r = s.client()
        fill(r)
        for n in range(2):
            r.bgrewriteaof()
            wait_rewrite(r, n)
        seen.append(listing(d))
        s.stop()
        s = start(start_server, binary, d, "--appendonly", "yes")   # and it loads
        assert s.client().lrange("l", 0, -1) == [str(i) for i in range(50)]
        s.stop()
    assert seen[0] == seen[1] == (["appendonly.aof.2.base.rdb", "appendonly.aof.manifest"],
                                  [("appendonly.aof.2.base.rdb", 2, "b")])


def test_command_base_and_kept_history(start_server, tmp_path):
    # aof-use-rdb-preamble no writes a base of commands; with
    # aof-disable-auto-gc the superseded files stay, listed as history.
    seen = []
    for binary in BOTH:
        d = tmp_path / os.path.basename(binary)
        s = start(start_server, binary, d, "--appendonly", "yes", "--aof-use-rdb-preamble", "no",
                  "--aof-disable-auto-gc", "yes")
        r = s.client()
        fill(r)
        for n in range(2):
            r.bgrewriteaof()
            wait_rewrite(r, n)
            r.set("k%d" % n, n)
        seen.append(listing(d))
        base = aof_file(str(d), "b")
        assert open(base, "rb").read(1) == b"*"       # commands, not an RDB image
        r.config_set("aof-disable-auto-gc", "no")
        r.bgrewriteaof()
        wait_rewrite(r, 2)
        names, manifest = listing(d)
        assert [t for _, _, t in manifest] == ["b", "i"] and len(names) == 3
        s.stop()
    assert seen[0] == seen[1]
    assert [t for _, _, t in seen[0][1]] == ["b", "h", "h", "h", "h", "i"]
    assert seen[0][1][0][0] == "appendonly.aof.3.base.aof"


def test_debug_loadaof_replays_the_files(start_server, tmp_path):
    for binary in BOTH:
        d = tmp_path / os.path.basename(binary)
        extra = ["--enable-debug-command", "yes"] if binary == REDIS_SERVER else []
        s = start(start_server, binary, d, "--appendonly", "yes", "--appendfsync", "always", *extra)
        r = s.client()
        r.set("a", "1")
        with open(aof_file(str(d)), "ab") as f:      # a write the server never saw
            f.write(b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n")
        r.set("c", "3")
        assert r.execute_command("DEBUG", "LOADAOF") == "OK"
        assert r.mget("a", "b", "c") == ["1", "2", "3"], binary
        assert r.dbsize() == 3
        s.stop()


def test_timestamp_annotations_and_truncate_to_timestamp(start_server, tmp_path):
    d = tmp_path / "ts"
    s = start(start_server, SERVER, d, "--appendonly", "yes", "--aof-timestamp-enabled", "yes",
              "--appendfsync", "always")
    r = s.client()
    r.set("early", "1")
    incr = aof_file(str(d))
    first = open(incr, "rb").read()
    assert first.startswith(b"#TS:")
    t0 = int(first[4:first.index(b"\r\n")])
    while int(time.time()) <= t0:
        time.sleep(0.05)
    r.set("late", "2")
    data = open(incr, "rb").read()
    assert data.count(b"#TS:") == 2
    s.stop()
    # Redis replays our annotated file, and so do we.
    for binary in BOTH:
        s = start(start_server, binary, d, "--appendonly", "yes")
        assert s.client().mget("early", "late") == ["1", "2"]
        s.stop()
    # Back to the data as it was at t0: the file is cut before the next
    # second's annotation.
    manifest = os.path.join(str(d), DIRNAME, "appendonly.aof.manifest")
    out = subprocess.run([CHECK_AOF, "--truncate-to-timestamp", str(t0), manifest], capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0, out.stdout
    assert "Successfully truncated" in out.stdout
    s = start(start_server, SERVER, d, "--appendonly", "yes")
    assert s.client().mget("early", "late") == ["1", None]


@pytest.mark.parametrize("text,reason", [
    ("file appendonly.aof.1.incr.aof seq 1 type i\nfoo bar\n", "Invalid AOF manifest file format"),
    ("file appendonly.aof.1.incr.aof seq 1 type x\n", "Unknown AOF file type"),
    ("file a seq 1 type b\nfile b seq 1 type b\n", "Found duplicate base file information"),
    ("file a seq 2 type i\nfile b seq 1 type i\n", "Found a non-monotonic sequence number"),
    ("", "Found an empty AOF manifest"),
    ("file a seq 1 type b", "The AOF manifest file contains too long line"),    # no newline
])
def test_bad_manifest_stops_start_up_as_in_redis(tmp_path, text, reason):
    for binary in BOTH:
        d = tmp_path / os.path.basename(binary)
        os.makedirs(d / DIRNAME)
        (d / DIRNAME / "appendonly.aof.manifest").write_text(text)
        out = subprocess.run([binary, "--port", str(free_port()), "--dir", str(d), "--appendonly", "yes", "--save", ""],
                             capture_output=True, text=True, timeout=10)
        assert out.returncode != 0, binary
        assert reason in out.stdout + out.stderr, (binary, out.stdout)


def test_manifest_of_comments_only_starts_afresh(start_server, tmp_path):
    seen = []
    for binary in BOTH:
        d = tmp_path / os.path.basename(binary)
        os.makedirs(d / DIRNAME)
        (d / DIRNAME / "appendonly.aof.manifest").write_text("# nothing yet\n")
        s = start(start_server, binary, d, "--appendonly", "yes")
        assert s.client().dbsize() == 0
        seen.append(listing(d))
        s.stop()
    assert seen[0] == seen[1]


def test_missing_file_named_in_the_manifest_stops_start_up(tmp_path):
    d = tmp_path / "m"
    os.makedirs(d / DIRNAME)
    (d / DIRNAME / "appendonly.aof.manifest").write_text("file appendonly.aof.1.base.rdb seq 1 type b\n")
    out = subprocess.run([SERVER, "--port", str(free_port()), "--dir", str(d), "--appendonly", "yes", "--save", ""],
                         capture_output=True, text=True, timeout=10)
    assert out.returncode != 0
    assert "appendonly.aof.1.base.rdb" in out.stdout and "No such file" in out.stdout


def two_incr_files(start_server, d):
    """A directory whose manifest names two incr files (a rewrite that
    never finished: its child killed by turning AOF off)."""
    s = start(start_server, SERVER, d, "--appendonly", "yes", "--aof-use-rdb-preamble", "no")
    r = s.client()
    r.set("a", "1")
    s.stop()
    name = "appendonly.aof.2.incr.aof"
    with open(os.path.join(str(d), DIRNAME, "appendonly.aof.manifest"), "a") as f:
        f.write("file %s seq 2 type i\n" % name)
    with open(os.path.join(str(d), DIRNAME, name), "wb") as f:
        f.write(b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n")


def test_only_the_last_file_may_be_truncated(start_server, tmp_path):
    d = tmp_path / "t"
    two_incr_files(start_server, d)
    first = os.path.join(str(d), DIRNAME, "appendonly.aof.1.incr.aof")
    last = os.path.join(str(d), DIRNAME, "appendonly.aof.2.incr.aof")
    with open(last, "ab") as f:
        f.write(b"*3\r\n$3\r\nSET\r\n$1\r\nc")         # a crash mid-write
    s = start(start_server, SERVER, d, "--appendonly", "yes")
    assert s.client().mget("a", "b", "c") == ["1", "2", None]
    assert "Truncating the AOF" in s.read_log()
    s.stop()
    with open(first, "ab") as f:
        f.write(b"*3\r\n$3\r\nSET\r\n$1\r\nc")         # the same in an earlier file
    with pytest.raises(RuntimeError) as e:
        start(start_server, SERVER, d, "--appendonly", "yes")
    assert "not the last file" in str(e.value)
    manifest = os.path.join(str(d), DIRNAME, "appendonly.aof.manifest")
    out = subprocess.run([CHECK_AOF, "--fix", manifest], capture_output=True, text=True, timeout=30)
    assert out.returncode == 1 and "It is not the last file" in out.stdout


def test_no_shutdown_while_the_first_aof_is_written(start_server, tmp_path):
    # Until the first base is in place no file holds the data: SHUTDOWN is
    # refused (as by Redis), and so is SIGTERM, which is logged instead.
    for binary in BOTH:
        d = tmp_path / os.path.basename(binary)
        s = start(start_server, binary, d, "--rdb-key-save-delay", "20000")
        r = s.client()
        for i in range(100):
            r.set("k%d" % i, i)
        r.config_set("appendonly", "yes")
        assert r.info("persistence")["aof_rewrite_in_progress"] == 1      # started by CONFIG SET itself
        with pytest.raises(Exception) as e:
            r.shutdown()
        assert "Errors trying to SHUTDOWN" in str(e.value), binary
        s.proc.terminate()                                                  # SIGTERM
        time.sleep(0.5)
        assert s.proc.poll() is None, binary
        log = s.read_log()
        assert "Writing initial AOF, can't exit." in log
        assert "Errors trying to shut down the server. Check the logs" in log
        wait_rewrite(r, 0, timeout=30)
        r.config_set("rdb-key-save-delay", 0)
        assert s.stop() == 0
        s = start(start_server, binary, d, "--appendonly", "yes")
        assert s.client().dbsize() == 100
        s.stop()


def test_appendonly_off_during_a_rewrite_stops_it(start_server, tmp_path):
    d = tmp_path / "off"
    s = start(start_server, SERVER, d, "--appendonly", "yes", "--rdb-key-save-delay", "100000")
    r = s.client()
    for i in range(50):
        r.set("k%d" % i, i)
    r.bgrewriteaof()
    assert r.info("persistence")["aof_rewrite_in_progress"] == 1
    r.config_set("appendonly", "no")
    deadline = time.time() + 5
    while r.info("persistence")["aof_rewrite_in_progress"] and time.time() < deadline:
        time.sleep(0.05)
    info = r.info("persistence")
    assert info["aof_enabled"] == 0 and info["aof_rewrite_in_progress"] == 0
    assert not [n for n in os.listdir(str(d)) if n.startswith("temp-")]
    assert "Killing running AOF rewrite child" in s.read_log()
    # The manifest still names a base and both incr files: nothing lost.
    assert [t for _, _, t in aof_manifest(str(d))] == ["b", "i", "i"]
    s.stop()
    s = start(start_server, SERVER, d, "--appendonly", "yes")
    assert s.client().dbsize() == 50


def test_failed_rewrites_are_counted_and_lose_nothing(fault_shim, start_server, monkeypatch, tmp_path):
    # The child's writes fail (a full disk): each failed BGREWRITEAOF leaves
    # its new incr file in the manifest, so the AOF still holds every write.
    # Ours only: Redis writes its rewrite through stdio, which the shim's
    # write() does not see.
    seen = []
    for binary in [SERVER]:
        d = tmp_path / os.path.basename(binary)
        os.makedirs(d)
        ctl = tmp_path / ("ctl-" + os.path.basename(binary))
        ctl.write_text("write ENOSPC 0 temp-rewriteaof-bg\n")
        s = start_under_shim(start_server, fault_shim, ctl, ["--dir", str(d), "--save", "", "--appendonly", "yes"],
                             monkeypatch, binary=binary)
        r = s.client()
        for n in range(3):
            r.set("k%d" % n, n)
            r.bgrewriteaof()
            deadline = time.time() + 10
            while r.info("persistence")["aof_rewrite_in_progress"] or \
                    r.info("persistence")["aof_rewrites_consecutive_failures"] <= n:
                assert time.time() < deadline, r.info("persistence")
                time.sleep(0.05)
        info = r.info("persistence")
        assert info["aof_rewrites_consecutive_failures"] == 3 and info["aof_last_bgrewrite_status"] == "err"
        failed = listing(d)
        ctl.write_text("")
        r.bgrewriteaof()
        info = wait_rewrite(r, 0)
        assert info["aof_rewrites_consecutive_failures"] == 0 and info["aof_last_bgrewrite_status"] == "ok"
        seen.append((failed, listing(d)))
        s.stop()
        s = start(start_server, binary, d, "--appendonly", "yes")
        assert s.client().mget("k0", "k1", "k2") == ["0", "1", "2"]
        s.stop()
    assert [t for _, _, t in seen[0][0][1]] == ["b", "i", "i", "i", "i"]
    assert [t for _, _, t in seen[0][1][1]] == ["b", "i"]
