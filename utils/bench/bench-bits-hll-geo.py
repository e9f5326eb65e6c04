#!/usr/bin/python3
"""bench-bits-hll-geo: bitmap, HyperLogLog and geo commands, and the cost of
latency tracking, against Debian's redis-server 7.0.15 in the same run.

Starts both servers (bench-vs-redis.py's helpers), preloads the same data
into each (a 1M-bit bitmap, a dense HLL, 100k geo points in a 10x10 degree
box), then runs Debian's redis-benchmark with one command per workload
(-c 50, random keys/offsets through __rand_int__), alternating the servers,
--runs times.  Prints medians of requests/s and of server CPU microseconds
per call (utime+stime of the server process around the run), and the
ratios ours/theirs.  --tracking adds SET/GET with latency-tracking yes and
no on each server (the per-command histograms of LATENCY HISTOGRAM/INFO
latencystats).  Nothing here passes or fails: it prints BENCHMARKS.md
figures.

usage: utils/bench/bench-bits-hll-geo.py [--runs 5] [--requests 200000] [--tracking]
"""
import argparse
import importlib.util
import os
import random
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bvr", os.path.join(HERE, "bench-vs-redis.py"))
bvr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bvr)

# redis-benchmark pads __rand_int__ with zeros, which no bit offset accepts:
# SETBIT and GETBIT get random offsets from a stream sent with redis-cli
# --pipe (one connection, the whole stream in flight), the same stream to
# both servers.
PIPE_WORKLOADS = [
    ("SETBIT (redis-cli --pipe)", lambda rnd: ["SETBIT", "bm", str(rnd.randrange(1_000_000)), "1"]),
    ("GETBIT (redis-cli --pipe)", lambda rnd: ["GETBIT", "bm", str(rnd.randrange(1_000_000))]),
]

# (label, command, divisor of --requests: the slow commands run fewer)
WORKLOADS = [
    ("BITCOUNT 1M bits", ["BITCOUNT", "bm"], 4),
    ("BITCOUNT 0 1023", ["BITCOUNT", "bm", "0", "1023"], 1),
    ("PFADD", ["PFADD", "hll", "e:__rand_int__"], 1),
    ("PFCOUNT (cached)", ["PFCOUNT", "hll2"], 1),
    ("PFCOUNT 2 keys", ["PFCOUNT", "hll", "hll2"], 4),
    ("GEOSEARCH 50 km COUNT 10", ["GEOSEARCH", "geo", "FROMLONLAT", "15", "40", "BYRADIUS", "50", "km", "COUNT",
                                  "10", "ASC"], 40),
    ("GEOSEARCH 20 km box WITHDIST", ["GEOSEARCH", "geo", "FROMLONLAT", "15", "40", "BYBOX", "20", "20", "km",
                                      "WITHDIST"], 4),
    ("GEOADD", ["GEOADD", "geo2", "13.361389", "38.115556", "m:__rand_int__"], 1),
]


def preload(port):
    bvr.cli(port, "FLUSHALL")
    rnd = random.Random(42)
    cmds = [bvr.resp("SETBIT", "bm", str(off), "1") for off in range(0, 1_000_000, 3)]
    cmds += [bvr.resp("PFADD", "hll2", *["p%d" % i for i in range(j, j + 1000)]) for j in range(0, 200_000, 1000)]
    cmds += [bvr.resp("PFADD", "hll", *["q%d" % i for i in range(j, j + 1000)]) for j in range(0, 50_000, 1000)]
    cmds += [bvr.resp("GEOADD", "geo", *[x for i in range(j, j + 100) for x in
                                          ("%.6f" % rnd.uniform(10, 20), "%.6f" % rnd.uniform(35, 45), "g%d" % i)])
             for j in range(0, 100_000, 100)]
    bvr.pipe_commands(port, cmds)
    bvr.cli(port, "PFCOUNT", "hll2")


def bench(port, pid, requests, command, pipeline=1):
    cmd = ["redis-benchmark", "-p", str(port), "-q", "--csv", "-n", str(requests), "-c", "50", "-r", "1000000"]
    if pipeline > 1:
        cmd += ["-P", str(pipeline)]
    before = bvr.cpu_seconds(pid)
    out = subprocess.run(cmd + command, capture_output=True, text=True).stdout
    cpu = bvr.cpu_seconds(pid) - before
    rps = 0.0
    for line in out.splitlines():
        parts = [x.strip('"') for x in line.split(",")]
        if len(parts) >= 2 and parts[0] != "test":
            rps = float(parts[1])
    return rps, cpu / requests * 1e6


def bench_pipe(port, pid, requests, make):
    rnd = random.Random(7)
    cmds = [bvr.resp(*make(rnd)) for _ in range(requests)]
    before_cpu, before = bvr.cpu_seconds(pid), time.time()
    bvr.pipe_commands(port, cmds)
    wall = time.time() - before
    return requests / wall, (bvr.cpu_seconds(pid) - before_cpu) / requests * 1e6


def table(title, rows, names):
    print(f"\n### {title}\n")
    print("| workload | " + " | ".join(f"{n} req/s" for n in names) + " | ratio | "
          + " | ".join(f"{n} CPU us/call" for n in names) + " | ratio |")
    print("| --- |" + " ---: |" * (2 * len(names) + 2))
    for label, res in rows:
        rps = [statistics.median(r for r, _ in res[n]) for n in names]
        cpu = [statistics.median(c for _, c in res[n]) for n in names]
        print(f"| {label} | " + " | ".join(f"{x:,.0f}" for x in rps) + f" | {rps[0] / max(rps[1], 1e-9):.2f} | "
              + " | ".join(f"{x:.2f}" for x in cpu) + f" | {cpu[0] / max(cpu[1], 1e-9):.2f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--server", default=os.path.join(bvr.ROOT, "src", "redis-like-server"))
    ap.add_argument("--tracking", action="store_true")
    ap.add_argument("--skip-commands", action="store_true")
    ap.add_argument("--only", default="", help="run only the workloads whose label starts with this")
    a = ap.parse_args()
    # A timeout's SIGTERM still stops both servers (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    servers = {"redis-like": bvr.start(a.server), "redis 7.0.15": bvr.start("/usr/bin/redis-server")}
    names = list(servers)
    try:
        if not a.skip_commands:
            for pipeline in (1, 16):
                for n, (p, port) in servers.items():
                    preload(port)
                rows = []
                for label, command, div in WORKLOADS:
                    if not label.startswith(a.only):
                        continue
                    res = {n: [] for n in names}
                    for _ in range(a.runs):
                        for n, (p, port) in servers.items():
                            res[n].append(bench(port, p.pid, a.requests // div, command, pipeline))
                    rows.append((label, res))
                if pipeline == 1:
                    for label, make in [w for w in PIPE_WORKLOADS if w[0].startswith(a.only)]:
                        res = {n: [] for n in names}
                        for _ in range(a.runs):
                            for n, (p, port) in servers.items():
                                res[n].append(bench_pipe(port, p.pid, a.requests, make))
                        rows.append((label, res))
                table(f"redis-benchmark -n {a.requests} -c 50 -r 1000000" + (f" -P {pipeline}" if pipeline > 1 else "")
                      + f", medians of {a.runs} runs", rows, names)
        if a.tracking:
            rows = []
            for test in ("set", "get"):
                for setting in ("yes", "no"):
                    res = {n: [] for n in names}
                    for _ in range(a.runs):
                        for n, (p, port) in servers.items():
                            bvr.cli(port, "CONFIG", "SET", "latency-tracking", setting)
                            rps, cpu = bvr.run_benchmark(port, p.pid, a.requests, 1, test)
                            res[n].append((rps.get(test.upper(), 0), cpu))
                    rows.append((f"{test.upper()} latency-tracking {setting}", res))
            table(f"redis-benchmark -n {a.requests} -c 50 -t set,get, latency-tracking yes/no, medians of "
                  f"{a.runs} runs", rows, names)
    finally:
        bvr.benchlib.stop_all([p for p, _ in servers.values()])


if __name__ == "__main__":
    sys.exit(main())
