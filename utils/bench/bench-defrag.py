#!/usr/bin/python3
"""bench-defrag.py: the active-defragmentation benchmark of issue 8.

For each server build (jemalloc and ebbmalloc redis-like builds in
build/bench-<alloc>, Debian's redis-server as the reference):
  1. fill --keys keys of --value-size-byte strings, written in a random
     order (a seeded permutation of the key numbers);
  2. delete every key numbered >= keys * (1 - delete_fraction).  As the
     writes went in random order, the survivors (key numbers 0..S-1) sit at
     random places in memory: the same scatter as deleting a random 80%,
     but the surviving range is contiguous, so redis-like-benchmark's
     `-t get -r S` reads only keys that exist;
  3. record INFO memory (mem_fragmentation_ratio, allocator_frag_ratio);
  4. undisturbed read load: an open-loop GET load (--rate ops/s, -r S) for
     --base-s seconds, its p99 from the --json output; server CPU over it;
  5. CONFIG SET the defrag thresholds and activedefrag yes (Debian's
     redis-server refuses: its reply is recorded and the run ends there),
     and run the same load in --window-s windows back to back while INFO
     is polled every 0.2 s, until allocator_frag_ratio <= --target, or it
     has not fallen by 0.01 for --stall-s seconds, or --max-s seconds.
     The windows that started before that moment are merged (their full
     latency distributions) into the "during" p99;
  6. activedefrag no, and the same load for --base-s seconds again: the
     undisturbed p99 is that of steps 4 and 6 merged, so drift in the
     machine's load during the run does not favour either side; INFO
     memory again (the allocator's decay has had time to return pages),
     and once more after MEMORY PURGE.
Server CPU is utime+stime of the server process (/proc/PID/stat, every
thread) from enabling defrag to the target (or the stop); "net" subtracts
what the read load alone cost per second in step 4.

Writes one JSON object per run to --out (default /tmp/bench-defrag.jsonl)
and prints a table of medians.  Only 127.0.0.1; every step is bounded in
time.  Called by hand (see BENCHMARKS.md, "Active defragmentation")."""
import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = benchlib.ROOT
REDIS_SERVER = benchlib.REDIS
REDIS_CLI = "/usr/bin/redis-cli"


class Server(benchlib.Server):
    """One server process on a free loopback port (benchlib.py), stopped by
    its pid; its log in its own directory."""

    def __init__(self, binary, extra=()):
        super().__init__(binary, extra, prefix="bench-defrag-", timeout=10)

    def cmd(self, *args):
        """One command through redis-cli; its reply as text."""
        r = subprocess.run([REDIS_CLI, "-p", str(self.port), *args], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise OSError(r.stderr.strip())
        return r.stdout.strip()

    def info(self, section="memory"):
        out = {}
        for line in self.cmd("INFO", section).splitlines():
            if ":" in line and not line.startswith("#"):
                k, v = line.split(":", 1)
                out[k] = v.strip()
        return out

    def cpu_s(self):
        return self.cpu_seconds()  # utime + stime


resp = benchlib.resp


def pipe_in(srv, chunks, timeout):
    """Stream RESP commands through redis-cli --pipe; check no errors."""
    p = subprocess.Popen([REDIS_CLI, "-p", str(srv.port), "--pipe", "--pipe-timeout", "30"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        for c in chunks:
            p.stdin.write(c)
        p.stdin.close()
        out = p.stdout.read().decode()
        p.wait(timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    if p.returncode != 0 or "errors: 0" not in out:
        raise RuntimeError("redis-cli --pipe failed: " + out[-500:])


def key(i):
    return b"key:%012d" % i


def fill_and_fragment(srv, a):
    order = list(range(a.keys))
    random.Random(a.seed).shuffle(order)
    value = b"v" * a.value_size

    def sets():
        buf = []
        for n, i in enumerate(order):
            buf.append(resp(b"SET", key(i), value))
            if n % 10000 == 9999:
                yield b"".join(buf)
                buf = []
        yield b"".join(buf)

    def dels():
        doomed = list(range(a.survivors, a.keys))
        for k in range(0, len(doomed), 1000):
            yield resp(b"DEL", *[key(i) for i in doomed[k:k + 1000]])

    t0 = time.time()
    pipe_in(srv, sets(), 600)
    t1 = time.time()
    pipe_in(srv, dels(), 600)
    n = int(srv.cmd("DBSIZE"))
    if n != a.survivors:
        raise RuntimeError(f"DBSIZE {n}, expected {a.survivors}")
    return t1 - t0, time.time() - t1


def mem_figures(srv):
    m = srv.info("memory")
    keys = ["used_memory", "used_memory_rss", "mem_fragmentation_ratio", "allocator_allocated",
            "allocator_active", "allocator_resident", "allocator_frag_ratio", "mem_allocator"]
    return {k: m.get(k) for k in keys}


def load_cmd(srv, a, seconds, json_path, seed):
    bench = os.path.join(a.bench_bin)
    return [bench, "-p", str(srv.port), "-t", "get", "-r", str(a.survivors), "--rate", str(a.rate),
            "--duration", str(seconds), "-c", str(a.clients), "--seed", str(seed), "--json", json_path, "-q"]


def read_json(path):
    with open(path) as f:
        t = json.load(f)["tests"][0]
    if t["errors"]:
        raise RuntimeError(f"GET load had {t['errors']} errors: {t['first_error']}")
    return t


def merged_percentile(tests, pct):
    """pct-th percentile of several runs' merged bucket distributions (upper
    edge of the bucket holding it, as the tool reports)."""
    buckets = {}
    for t in tests:
        for lo, hi, n in t["distribution"]:
            buckets[(lo, hi)] = buckets.get((lo, hi), 0) + n
    total = sum(buckets.values())
    need = total * pct / 100.0
    seen = 0
    for (lo, hi), n in sorted(buckets.items()):
        seen += n
        if seen >= need:
            return hi
    return 0.0


def run_one(label, binary, a, run_no, tmp):
    extra = ["--hz", str(a.hz)] if a.hz else []
    srv = Server(binary, extra)
    res = {"server": label, "run": run_no, "keys": a.keys, "value_size": a.value_size,
           "survivors": a.survivors, "rate": a.rate, "hz": a.hz}
    try:
        res["fill_s"], res["delete_s"] = fill_and_fragment(srv, a)
        time.sleep(2)
        res["after_delete"] = mem_figures(srv)
        srv.cmd("MEMORY", "PURGE")
        time.sleep(1)
        res["after_purge"] = mem_figures(srv)
        jb = os.path.join(tmp, f"{label}-{run_no}-base.json")
        c0 = srv.cpu_s()
        subprocess.run(load_cmd(srv, a, a.base_s, jb, a.seed + run_no), check=True,
                       stdout=subprocess.DEVNULL, timeout=a.base_s + 60)
        load_cpu_per_s = (srv.cpu_s() - c0) / a.base_s
        base = read_json(jb)
        res["base_p99_ms"] = base["latency_ms"]["p99"]
        res["base_p50_ms"] = base["latency_ms"]["p50"]
        res["base_rps"] = base["rps"]
        res["load_cpu_per_s"] = load_cpu_per_s
        for name, val in (("active-defrag-ignore-bytes", a.ignore_bytes),
                          ("active-defrag-threshold-lower", str(a.lower)),
                          ("active-defrag-threshold-upper", str(a.upper)),
                          ("active-defrag-cycle-min", str(a.cycle_min)),
                          ("active-defrag-cycle-max", str(a.cycle_max))):
            srv.cmd("CONFIG", "SET", name, val)
        reply = srv.cmd("CONFIG", "SET", "activedefrag", "yes")
        res["enable_reply"] = reply
        if reply != "OK":
            return res
        t0, c0 = time.time(), srv.cpu_s()
        reached_at = cpu_at = None
        windows, trace = [], []
        w = 0
        best, best_at = 1e9, 0.0
        while reached_at is None and time.time() - t0 < a.max_s and time.time() - t0 - best_at < a.stall_s:
            jw = os.path.join(tmp, f"{label}-{run_no}-w{w}.json")
            p = subprocess.Popen(load_cmd(srv, a, a.window_s, jw, a.seed + 100 * run_no + w),
                                 stdout=subprocess.DEVNULL)
            try:
                while p.poll() is None:
                    time.sleep(0.2)
                    if reached_at is None:
                        m = srv.info("memory")
                        r = float(m["allocator_frag_ratio"])
                        trace.append((round(time.time() - t0, 2), r, int(m["used_memory_rss"])))
                        if r <= a.target:
                            reached_at, cpu_at = time.time() - t0, srv.cpu_s() - c0
                        if r < best - 0.01:
                            best, best_at = r, time.time() - t0
                p.wait(a.window_s + 60)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            windows.append(read_json(jw))
            w += 1
        if reached_at is None:
            cpu_at = srv.cpu_s() - c0
        st = srv.info("stats")
        res["after_defrag"] = mem_figures(srv)
        srv.cmd("CONFIG", "SET", "activedefrag", "no")
        time.sleep(1)
        ja = os.path.join(tmp, f"{label}-{run_no}-after.json")
        subprocess.run(load_cmd(srv, a, a.base_s, ja, a.seed + run_no + 50), check=True,
                       stdout=subprocess.DEVNULL, timeout=a.base_s + 60)
        after = read_json(ja)
        res["after_p99_ms"] = after["latency_ms"]["p99"]
        res["undisturbed_p99_ms"] = merged_percentile([base, after], 99)
        res["end"] = mem_figures(srv)               # decay has had base_s + 1 s
        srv.cmd("MEMORY", "PURGE")
        time.sleep(1)
        res["end_purge"] = mem_figures(srv)
        res["reached_target"] = reached_at is not None
        res["defrag_s"] = reached_at if reached_at is not None else time.time() - t0
        res["defrag_cpu_s"] = cpu_at
        res["defrag_cpu_net_s"] = cpu_at - load_cpu_per_s * res["defrag_s"]
        res["during_p99_ms"] = merged_percentile(windows, 99)
        res["during_p50_ms"] = merged_percentile(windows, 50)
        res["during_max_ms"] = max(t["latency_ms"]["max"] for t in windows)
        res["during_windows"] = len(windows)
        res["p99_ratio"] = res["during_p99_ms"] / res["undisturbed_p99_ms"]
        res["defrag_stats"] = {k: st.get(k) for k in ("active_defrag_hits", "active_defrag_misses",
                                                      "active_defrag_key_hits", "active_defrag_key_misses")}
        res["trace"] = trace
        # every survivor still reads back whole
        sample = random.Random(run_no).sample(range(a.survivors), 200)
        for i in sample:
            if srv.cmd("STRLEN", key(i).decode()) != str(a.value_size):
                raise RuntimeError(f"key {i} lost or damaged after defrag")
        return res
    finally:
        srv.stop()


def median(rows, k):
    vals = [r[k] for r in rows if r.get(k) is not None]
    return statistics.median(vals) if vals else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--servers", default="jemalloc,ebbmalloc,redis-server",
                    help="redis-like builds in build/bench-<alloc>, and redis-server")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--value-size", type=int, default=200)
    ap.add_argument("--delete-fraction", type=float, default=0.8)
    ap.add_argument("--rate", type=int, default=20000, help="GET load, requests/s (open loop)")
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--base-s", type=int, default=10, help="undisturbed load seconds")
    ap.add_argument("--window-s", type=int, default=1, help="load window during defrag")
    ap.add_argument("--max-s", type=int, default=120, help="give up on the target after this")
    ap.add_argument("--stall-s", type=int, default=20,
                    help="stop early when allocator_frag_ratio has not fallen by 0.01 for this long")
    ap.add_argument("--target", type=float, default=1.1, help="allocator_frag_ratio to reach")
    ap.add_argument("--ignore-bytes", default="1mb")
    ap.add_argument("--lower", type=int, default=5)
    ap.add_argument("--upper", type=int, default=100)
    ap.add_argument("--cycle-min", type=int, default=1)
    ap.add_argument("--cycle-max", type=int, default=25)
    ap.add_argument("--hz", type=int, default=0, help="server hz (0: its default)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--bench-bin", default=os.path.join(ROOT, "build", "bench-jemalloc", "redis-like-benchmark"))
    ap.add_argument("--out", default="/tmp/bench-defrag.jsonl")
    a = ap.parse_args()
    # SIGTERM (timeout(1), a kill by pid) unwinds normally, so every
    # server started here is stopped by its `finally`.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    a.survivors = int(round(a.keys * (1 - a.delete_fraction)))
    tmp = tempfile.mkdtemp(prefix="bench-defrag-json-")
    rows = []
    with open(a.out, "a") as out:
        for run_no in range(1, a.runs + 1):
            for label in a.servers.split(","):
                if label == "redis-server" and run_no > 1:
                    continue           # figures only: nothing to time there
                binary = REDIS_SERVER if label == "redis-server" else \
                    os.path.join(ROOT, "build", f"bench-{label}", "redis-like-server")
                r = run_one(label, binary, a, run_no, tmp)
                out.write(json.dumps(r) + "\n")
                out.flush()
                rows.append(r)
                ad = r["after_delete"]
                print(f"{label} run {run_no}: after delete frag {ad['mem_fragmentation_ratio']} "
                      f"alloc_frag {ad['allocator_frag_ratio']}; enable: {r['enable_reply']}; "
                      + (f"{r['defrag_s']:.1f} s to {r['after_defrag']['allocator_frag_ratio']} "
                         f"(rss {int(r['after_defrag']['used_memory_rss']) >> 20} MiB) "
                         f"(reached {r['reached_target']}), cpu {r['defrag_cpu_s']:.2f} s "
                         f"(net {r['defrag_cpu_net_s']:.2f}), p99 {r['undisturbed_p99_ms']:.3f} -> "
                         f"{r['during_p99_ms']:.3f} ms ({r['p99_ratio']:.2f}x)"
                         if "defrag_s" in r else ""), flush=True)
    print("\nmedians:")
    for label in a.servers.split(","):
        rs = [r for r in rows if r["server"] == label and "defrag_s" in r]
        if not rs:
            continue
        print(f"  {label}: defrag_s {median(rs, 'defrag_s'):.1f}, cpu {median(rs, 'defrag_cpu_s'):.2f} "
              f"(net {median(rs, 'defrag_cpu_net_s'):.2f}), undisturbed p99 {median(rs, 'undisturbed_p99_ms'):.3f}, "
              f"during p99 {median(rs, 'during_p99_ms'):.3f}, ratio {median(rs, 'p99_ratio'):.2f}, "
              f"reached {sum(r['reached_target'] for r in rs)}/{len(rs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
