"""test_benchmark_tool.py: integration tests of src/redis-like-benchmark.

Starts its own server (RL_BENCH_TARGET_SERVER, default Debian's
/usr/bin/redis-server) on a free loopback port, runs the tool (RL_BENCH, default
src/redis-like-benchmark) against it and checks what the server saw: keys
written versus -n/-r, commands counted by INFO commandstats versus what the
tool claims, CSV/JSON that parse, custom commands, error replies counted, the
latency sweep (its points, maximum, JSON and PNG), and bad options refused
with exit code 1.  The server is killed by pid.
"""
import csv
import io
import json
import os
import re
import subprocess

import pytest
import redis
from conftest import ServerProcess, free_port

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BENCH = os.environ.get("RL_BENCH", os.path.join(ROOT, "src", "redis-like-benchmark"))
SERVER = os.environ.get("RL_BENCH_TARGET_SERVER", "/usr/bin/redis-server")


@pytest.fixture(scope="module")
def server():
    if not os.access(BENCH, os.X_OK):
        pytest.fail("benchmark tool not built (make -C src tools): " + BENCH)
    s = ServerProcess(SERVER)  # conftest.py: a free port, stopped by pid
    yield s.port, s.client()
    s.stop()


def run(port, *args, timeout=30):
    if not os.access(BENCH, os.X_OK):
        pytest.fail("benchmark tool not built (make -C src tools): " + BENCH)
    return subprocess.run([BENCH, "-p", str(port)] + [str(a) for a in args],
                          capture_output=True, text=True, timeout=timeout)


def calls(client, cmd):
    stats = client.info("commandstats")
    return stats.get("cmdstat_" + cmd, {}).get("calls", 0)


def run_json(port, tmp_path, *args):
    path = tmp_path / "out.json"
    r = run(port, "-q", "--json", path, *args)
    assert r.returncode == 0, r.stderr
    return json.loads(path.read_text()), r


def test_random_keys_stay_in_range(server):
    port, c = server
    c.flushall()
    r = run(port, "-t", "set", "-n", 1000, "-r", 100, "-q")
    assert r.returncode == 0, r.stderr
    assert 0 < c.dbsize() <= 100
    assert all(re.fullmatch(r"key:\d{12}", k) for k in c.keys("*"))
    assert all(int(k[4:]) < 100 for k in c.keys("*"))


def test_without_r_one_key(server):
    port, c = server
    c.flushall()
    assert run(port, "-t", "set", "-n", 500, "-q").returncode == 0
    assert c.keys("*") == ["key:__rand_int__"]
    assert c.strlen("key:__rand_int__") == 3          # -d default


def test_data_size_and_mset(server):
    port, c = server
    c.flushall()
    assert run(port, "-t", "mset", "-n", 10, "-c", 1, "-r", 1000000, "-d", 17, "-q").returncode == 0
    assert 90 <= c.dbsize() <= 100                  # 10 keys per MSET
    assert {c.strlen(k) for k in c.keys("*")} == {17}


@pytest.mark.parametrize("pipeline,clients,threads", [(1, 10, 1), (16, 7, 1), (5, 50, 2)])
def test_pipeline_sends_what_it_claims(server, tmp_path, pipeline, clients, threads):
    port, c = server
    c.config_resetstat()
    doc, _ = run_json(port, tmp_path, "-t", "set,get", "-n", 1000, "-P", pipeline,
                      "-c", clients, "--threads", threads, "-r", 1000)
    assert [t["requests"] for t in doc["tests"]] == [1000, 1000]
    assert calls(c, "set") == 1000
    assert calls(c, "get") == 1000


def test_n_smaller_than_c(server, tmp_path):
    port, c = server
    c.config_resetstat()
    doc, _ = run_json(port, tmp_path, "-t", "incr", "-n", 5, "-c", 50)
    assert doc["tests"][0]["requests"] == 5
    assert doc["tests"][0]["clients"] == 5
    assert calls(c, "incr") == 5


def test_n_smaller_than_c_says_so(server):
    port, _ = server
    r = run(port, "-t", "get", "-n", 4, "-c", 20)
    assert r.returncode == 0, r.stderr
    assert "  4 parallel clients (lowered from -c 20 to match -n)" in r.stdout
    assert "  4 requests completed in " in r.stdout
    assert "lowered" not in run(port, "-t", "get", "-n", 40, "-c", 20).stdout


def test_csv_parses(server):
    port, _ = server
    r = run(port, "--csv", "-t", "set,get,lrange_100", "-n", 500)
    assert r.returncode == 0, r.stderr
    rows = list(csv.reader(io.StringIO(r.stdout)))
    assert rows[0] == ["test", "rps", "avg_latency_ms", "min_latency_ms", "p50_latency_ms",
                       "p95_latency_ms", "p99_latency_ms", "max_latency_ms"]
    assert [row[0] for row in rows[1:]] == ["SET", "GET", "LPUSH (needed to benchmark LRANGE)",
                                            "LRANGE_100 (first 100 elements)"]
    for row in rows[1:]:
        vals = [float(v) for v in row[1:]]
        assert vals[0] > 0
        assert vals[2] <= vals[3] <= vals[4] <= vals[5] <= vals[6]   # min<=p50<=p95<=p99<=max


def test_text_output_shape(server):
    port, _ = server
    r = run(port, "-t", "get", "-n", 300, "-c", 3)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "====== GET ======" in out
    assert "  300 requests completed in " in out
    assert "  3 parallel clients" in out
    assert re.search(r"throughput summary: [\d.]+ requests per second", out)
    assert re.search(r"avg\s+min\s+p50\s+p95\s+p99\s+max\n(\s+[\d.]+){6}", out)
    assert "\r" not in out                          # no progress line when not a TTY
    q = run(port, "-t", "get", "-n", 300, "-q")
    assert re.fullmatch(r"GET: [\d.]+ requests per second, p50=[\d.]+ msec\n", q.stdout)


def test_json_figures(server, tmp_path):
    port, _ = server
    doc, _ = run_json(port, tmp_path, "-t", "set", "-n", 2000, "-P", 4)
    t = doc["tests"][0]
    lat = t["latency_ms"]
    assert t["name"] == "SET" and t["requests"] == 2000 and t["errors"] == 0
    assert lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99.9"] <= lat["max"]
    assert sum(b[2] for b in t["distribution"]) == 2000
    assert doc["config"]["pipeline"] == 4


def test_custom_command(server):
    port, c = server
    c.delete("bench:set")
    r = run(port, "-n", 300, "-r", 50, "-q", "SADD", "bench:set", "__rand_int__")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("SADD bench:set __rand_int__: ")
    assert 0 < c.scard("bench:set") <= 50
    assert all(re.fullmatch(r"\d{12}", m) for m in c.smembers("bench:set"))


def test_error_replies_counted(server, tmp_path):
    port, c = server
    c.set("bench:notnum", "abc")
    doc, r = run_json(port, tmp_path, "-n", 100, "-c", 4, "INCR", "bench:notnum")
    t = doc["tests"][0]
    assert t["requests"] == 100 and t["errors"] == 100
    assert "not an integer" in t["first_error"]
    assert "100 error replies" in r.stdout


def test_ratio_and_duration(server, tmp_path):
    port, c = server
    c.config_resetstat()
    doc, _ = run_json(port, tmp_path, "--ratio", "1:3", "--duration", 1, "-r", 100, "-c", 8)
    t = doc["tests"][0]
    sets, gets = t["by_command"]["SET"], t["by_command"]["GET"]
    assert 0.9 <= t["seconds"] <= 2.0
    assert sets + gets == t["requests"] and t["requests"] > 1000
    assert 2.5 < gets / sets < 3.5
    assert calls(c, "set") == sets and calls(c, "get") == gets


def test_rate_open_loop(server, tmp_path):
    port, _ = server
    doc, _ = run_json(port, tmp_path, "-t", "set", "--rate", 2000, "--duration", 1, "-c", 4)
    n = doc["tests"][0]["requests"]
    assert 1600 <= n <= 2400, n


def test_data_size_list_and_key_pattern(server):
    port, c = server
    c.flushall()
    r = run(port, "-t", "set", "-n", 3000, "-r", 100000, "--key-pattern", "sequential",
            "--data-size-list", "32:50,1024:50", "-q")
    assert r.returncode == 0, r.stderr
    assert c.dbsize() == 3000                        # sequential: no repeats
    sizes = {c.strlen(k) for k in c.keys("*")}
    assert sizes == {32, 1024}
    c.flushall()
    assert run(port, "-t", "set", "-n", 3000, "-r", 1000, "--key-pattern", "zipf",
               "--data-size", "10-20", "-q").returncode == 0
    assert c.dbsize() < 900                          # skewed: hot keys repeat
    assert all(10 <= c.strlen(k) <= 20 for k in c.keys("*"))


def test_zipf_hot_keys_spread_over_range(server):
    # INCR on zipf keys: each key's value is how often it was drawn.
    port, c = server
    c.flushall()
    r = run(port, "-n", 20000, "-r", 100000, "--key-pattern", "zipf", "-P", 8, "-q",
            "INCR", "z:__rand_int__")
    assert r.returncode == 0, r.stderr
    counts = {int(k[2:]): int(c.get(k)) for k in c.keys("z:*")}
    assert sum(counts.values()) == 20000
    hottest = sorted(counts, key=counts.get, reverse=True)[:20]
    assert counts[hottest[0]] > 20 * 20000 / 100000          # still skewed
    assert hottest[0] != 0                                    # rank 0 is not key 0
    assert sum(k >= 50000 for k in hottest) >= 4              # not all in the low half
    assert max(hottest) - min(hottest) > 50000                # spread over the range
    upper = sum(k >= 50000 for k in counts) / len(counts)
    assert 0.3 < upper < 0.7, upper                           # unscrambled: ~0.06


def test_memory_sample(server, tmp_path):
    port, _ = server
    path = tmp_path / "mem.csv"
    r = run(port, "-t", "set", "--duration", 2.2, "-r", 1000, "-q", "--memory-sample", path)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert len(rows) >= 3
    assert all(int(row["used_memory"]) > 0 for row in rows)
    assert int(rows[-1]["vmrss"]) > 0
    assert max(float(row["ops_per_sec"]) for row in rows) > 0


def test_no_keepalive_reconnects(server):
    port, c = server
    before = c.info("stats")["total_connections_received"]
    assert run(port, "-t", "set", "-n", 200, "-c", 4, "-k", 0, "-q").returncode == 0
    assert c.info("stats")["total_connections_received"] - before >= 200


@pytest.mark.parametrize("args", [
    ["-c", "0"], ["-n", "abc"], ["-P", "-1"], ["-d", "0"], ["--ratio", "x"],
    ["--key-pattern", "foo"], ["-t", "nosuchtest"], ["--data-size", "5-2"],
    ["--data-size-list", "32"], ["--threads", "0"], ["--no-such-option", "1"], ["-n"],
])
def test_bad_options_rejected(server, args):
    port, _ = server
    r = run(port, *args)
    assert r.returncode == 1
    assert r.stderr.strip()


def test_unreachable_server():
    r = run(free_port(), "-t", "set", "-n", 10, "-q")
    assert r.returncode == 1
    assert "Could not connect" in r.stderr


def test_auth_failure(server):
    port, c = server
    c.config_set("requirepass", "s3cret")
    try:
        bad = run(port, "-a", "wrong", "-t", "set", "-n", 10, "-q")
        good = run(port, "-a", "s3cret", "-t", "set", "-n", 10, "-q")
    finally:
        admin = redis.Redis(host="127.0.0.1", port=port, password="s3cret")
        admin.config_set("requirepass", "")
    assert bad.returncode == 1 and "AUTH failed" in bad.stderr
    assert good.returncode == 0, good.stderr


# ---- I/O engines: io_uring and the epoll fallback --------------------------

def uring_available(port):
    r = run(port, "--engine", "uring", "-t", "ping_mbulk", "-n", 1, "-q")
    if r.returncode != 0 and "io_uring is not available" in r.stderr:
        return False
    assert r.returncode == 0, r.stderr
    return True


def io_uring_disabled_by_kernel():
    """True only when the kernel itself forbids io_uring (sysctl 2)."""
    try:
        with open("/proc/sys/kernel/io_uring_disabled") as f:
            return f.read().strip() == "2"
    except OSError:
        return False


def engine_or_skip(port, engine):
    if engine == "uring" and not uring_available(port):
        if io_uring_disabled_by_kernel():
            pytest.skip("io_uring is disabled by this kernel (kernel.io_uring_disabled=2)")
        pytest.fail("the tool has no working io_uring engine on a kernel that allows io_uring")
    return {"uring": "io_uring", "epoll": "epoll"}[engine]


def test_kernel_without_io_uring(server, tmp_path, no_io_uring):
    """Under a seccomp filter that fails the io_uring calls (a kernel
    without it): --engine auto runs epoll and counts every request;
    --engine uring refuses with the reason."""
    port, c = server
    c.flushall()
    path = tmp_path / "out.json"
    r = subprocess.run([no_io_uring, "ENOSYS", BENCH, "-p", str(port), "-q", "--json", str(path), "-t", "set",
                        "-n", "500", "-c", "5"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    doc = json.loads(path.read_text())
    assert [(t["engine"], t["requests"]) for t in doc["tests"]] == [("epoll", 500)]
    refused = subprocess.run([no_io_uring, "ENOSYS", BENCH, "-p", str(port), "--engine", "uring", "-t", "set",
                              "-n", "10", "-q"], capture_output=True, text=True, timeout=30)
    assert refused.returncode != 0
    assert "io_uring is not available" in refused.stderr


@pytest.mark.parametrize("engine", ["uring", "epoll"])
@pytest.mark.parametrize("pipeline,clients,threads", [(1, 10, 1), (16, 50, 2), (3, 1, 1)])
def test_engine_counts(server, tmp_path, engine, pipeline, clients, threads):
    port, c = server
    name = engine_or_skip(port, engine)
    c.flushall()
    c.config_resetstat()
    doc, r = run_json(port, tmp_path, "--engine", engine, "-t", "set,get", "-n", 3001,
                      "-P", pipeline, "-c", clients, "--threads", threads, "-r", 1000)
    assert [t["engine"] for t in doc["tests"]] == [name, name]
    assert [t["requests"] for t in doc["tests"]] == [3001, 3001]
    assert [t["errors"] for t in doc["tests"]] == [0, 0]
    assert calls(c, "set") == 3001 and calls(c, "get") == 3001
    assert 0 < c.dbsize() <= 1000
    assert r.stderr == ""


@pytest.mark.parametrize("engine", ["uring", "epoll"])
def test_engine_big_replies_and_errors(server, tmp_path, engine):
    # LRANGE_600 replies (~6 KB each, 8 per batch) span several receive
    # buffers and split header lines; error replies are counted too.
    port, c = server
    name = engine_or_skip(port, engine)
    c.delete("mylist")
    c.config_resetstat()
    doc, _ = run_json(port, tmp_path, "--engine", engine, "-t", "lrange_600", "-n", 400,
                      "-P", 8, "-c", 5, "-d", 7)
    assert [t["requests"] for t in doc["tests"]] == [400, 400]
    assert doc["tests"][1]["engine"] == name
    assert calls(c, "lrange") == 400
    c.set("bench:notnum", "abc")
    doc, _ = run_json(port, tmp_path, "--engine", engine, "-n", 64, "-c", 3, "-P", 4,
                      "INCR", "bench:notnum")
    assert doc["tests"][0]["errors"] == 64
    assert "not an integer" in doc["tests"][0]["first_error"]


@pytest.mark.parametrize("engine", ["uring", "epoll"])
def test_engine_reconnects_and_paces(server, tmp_path, engine):
    port, c = server
    engine_or_skip(port, engine)
    before = c.info("stats")["total_connections_received"]
    r = run(port, "--engine", engine, "-t", "set", "-n", 300, "-c", 4, "-k", 0, "-q")
    assert r.returncode == 0, r.stderr
    assert c.info("stats")["total_connections_received"] - before >= 300
    doc, _ = run_json(port, tmp_path, "--engine", engine, "-t", "set", "--rate", 1500,
                      "--duration", 1, "-c", 3)
    assert 1200 <= doc["tests"][0]["requests"] <= 1800


def test_engine_auto_falls_back_to_epoll(server, tmp_path):
    port, c = server
    env = dict(os.environ, RL_BENCH_NO_IO_URING="1")
    path = tmp_path / "fb.json"
    c.config_resetstat()
    r = subprocess.run([BENCH, "-p", str(port), "-t", "incr", "-n", "777", "-c", "7",
                        "--json", str(path)], capture_output=True, text=True, timeout=30, env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and re.fullmatch(r"io_uring not available \(.+\): using epoll", lines[0])
    doc = json.loads(path.read_text())
    assert doc["tests"][0]["engine"] == "epoll" and doc["tests"][0]["requests"] == 777
    assert calls(c, "incr") == 777
    quiet = subprocess.run([BENCH, "-p", str(port), "-t", "incr", "-n", "10", "-q"],
                           capture_output=True, text=True, timeout=30, env=env)
    assert quiet.returncode == 0 and quiet.stderr == ""       # -q: no notice
    forced = subprocess.run([BENCH, "-p", str(port), "--engine", "uring", "-t", "incr",
                             "-n", "10", "-q"], capture_output=True, text=True, timeout=30, env=env)
    assert forced.returncode == 1
    assert "--engine uring: io_uring is not available" in forced.stderr


def test_engine_option_rejects_unknown(server):
    port, _ = server
    r = run(port, "--engine", "kqueue", "-t", "set", "-n", 10)
    assert r.returncode == 1
    assert "Invalid value for --engine: 'kqueue'" in r.stderr


# ---- --latency-sweep ----------------------------------------------------------

def sweep(port, tmp_path, *args, timeout=60):
    path = tmp_path / "sweep.json"
    r = run(port, "--latency-sweep", "--json", path, *args, timeout=timeout)
    assert r.returncode == 0, r.stderr
    return json.loads(path.read_text()), r


def test_latency_sweep_open_loop_points(server, tmp_path):
    """Two targets (the same server under two names) at two shares of a
    given maximum: every point is run on each, at the asked rate, and the
    server counts exactly the requests the sweep reports."""
    port, c = server
    c.config_resetstat()
    doc, r = sweep(port, tmp_path, "--sweep-max", 4000, "--sweep-points", "25,50", "--duration", 0.5,
                   "-c", 4, "-t", "get", "-r", 1000, "--target", f"a={port}", "--target", f"b=127.0.0.1:{port}")
    assert doc["mode"] == "latency-sweep" and doc["base"] == "--sweep-max" and doc["max_rps"] == 4000
    assert [t["name"] for t in doc["targets"]] == ["a", "b"]
    total = 0
    for t in doc["targets"]:
        assert t["closed_loop"] is None
        assert [p["percent"] for p in t["points"]] == [25, 50]
        for p in t["points"]:
            m = p["median"]
            assert p["rate"] == p["percent"] * 40
            assert 0.8 * p["rate"] <= m["achieved"] <= 1.2 * p["rate"], (p["rate"], m)
            assert 0.8 * p["rate"] * 0.5 <= m["requests"] <= 1.2 * p["rate"] * 0.5
            assert m["p50_ms"] <= m["p99_ms"] <= m["p99.9_ms"] <= m["max_ms"]
            assert m["server_cpu_us_per_request"] > 0          # INFO cpu of the target
            assert p["sustained_runs"] == 1 and m["errors"] == 0
            total += m["requests"]
    assert calls(c, "get") == total
    assert "100% = 4000 req/s (--sweep-max)" in r.stdout
    assert re.search(r"^  a +\d+ req/s +p50 +[\d.]+ +p99 +[\d.]+ +p99\.9 +[\d.]+ ms", r.stdout, re.M)


def test_latency_sweep_measures_the_maximum(server, tmp_path):
    """Without --sweep-max the base target's closed-loop maximum (median of
    the runs) is 100%; every run is kept in the JSON."""
    port, _ = server
    doc, r = sweep(port, tmp_path, "--sweep-points", "5", "--sweep-runs", 3, "--duration", 0.3, "-c", 3,
                   "--ratio", "1:4", "-r", 1000, "--target", f"x={port}", "--target", f"y={port}", "--sweep-base", "y")
    assert doc["base"] == "y" and doc["config"]["runs"] == 3
    y = next(t for t in doc["targets"] if t["name"] == "y")
    closed = sorted(run_["achieved"] for run_ in y["closed_loop"]["runs"])
    assert len(closed) == 3 and closed[0] > 0
    assert doc["max_rps"] == pytest.approx(closed[1], rel=1e-3)
    for t in doc["targets"]:
        p = t["points"][0]
        assert p["rate"] == pytest.approx(0.05 * doc["max_rps"], rel=1e-3)
        assert len(p["runs"]) == 3
        assert p["median"]["achieved"] == pytest.approx(sorted(x["achieved"] for x in p["runs"])[1], rel=1e-3)
    assert r.stdout.count("closed loop, run ") == 6                 # 3 runs x 2 targets
    assert "closed-loop maximum (-P 1):  x " in r.stdout


def test_latency_sweep_plot(server, tmp_path):
    port, _ = server
    png = tmp_path / "curves.png"
    r = run(port, "--latency-sweep", "--sweep-max", 2000, "--sweep-points", "20,40", "--duration", 0.3, "-c", 2,
            "-t", "set", "--plot", png, "--target", f"one={port}", "--target", f"two={port}")
    assert r.returncode == 0, r.stderr
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


@pytest.mark.parametrize("args,message", [
    (["--target", "a=1"], "need --latency-sweep"),
    (["--plot", "x.png"], "need --latency-sweep"),
    (["--latency-sweep", "-t", "set,get"], "runs one test"),
    (["--latency-sweep", "-t", "get", "--rate", "100"], "sets the rates itself"),
    (["--latency-sweep", "-t", "get", "--target", "a=1", "--sweep-base", "b"], "names no --target"),
    (["--latency-sweep", "-t", "get", "--sweep-points", "10,,20"], "Invalid value for --sweep-points"),
    (["--latency-sweep", "-t", "get", "--sweep-points", "0"], "Invalid value for --sweep-points"),
    (["--latency-sweep", "-t", "get", "--target", "noport"], "Invalid value for --target"),
    (["--latency-sweep", "-t", "get", "--target", "a=1", "--target", "a=2"], "Invalid value for --target"),
])
def test_latency_sweep_bad_options(server, args, message):
    port, _ = server
    r = run(port, *args)
    assert r.returncode == 1
    assert message in r.stderr


def test_latency_sweep_unreachable_target(server):
    port, _ = server
    dead = free_port()
    r = run(port, "--latency-sweep", "-t", "get", "--sweep-max", 100, "--duration", 0.2,
            "--target", f"up={port}", "--target", f"down={dead}")
    assert r.returncode == 1
    assert "Could not connect" in r.stderr and "(target down)" in r.stderr
