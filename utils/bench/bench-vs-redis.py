#!/usr/bin/python3
"""bench-vs-redis: redis-like-server against Debian's redis-server, same run.

Starts both servers on free loopback ports, then for each mode (no
pipelining, -P 16) runs Debian's redis-benchmark against each server in
turn, --runs times, and prints the median requests/s per test with the
ratio ours/theirs, plus each server's CPU seconds per million requests
(utime+stime from /proc/PID/stat around the run).  Finally it loads the
same 1M keys (key:%012d, 3-byte values) into each server and prints
used_memory per key.  Nothing here is a pass/fail test: it prints figures
for BENCHMARKS.md.

--base BINARY adds a third server, an earlier build of ours, to the same
runs (each run takes the servers in a rotated order), and the tables get
its column and ours/base: the "nothing slower" check of a refactoring.

usage: utils/bench/bench-vs-redis.py [--runs 3] [--requests 200000] [--keys 1000000]
                               [--server src/redis-like-server] [--skip-memory]
                               [--base build/base/redis-like-server]
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = benchlib.ROOT
TESTS = "ping,set,get,incr,mset"
TYPE_TESTS = "lpush,rpush,lpop,rpop,sadd,hset,spop,zadd,zpopmin,lrange_100,lrange_300,lrange_500,lrange_600"


free_port = benchlib.free_port
cpu_seconds = benchlib.cpu_seconds


def start(binary, extra=()):
    """(process, port) of a server on a free loopback port (benchlib.py);
    bench-acl.py and the other scripts that import this module use the pair."""
    s = benchlib.Server(binary, extra, log=False, wait="any", prefix="bench-")
    return s.proc, s.port


def cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port)] + list(args), capture_output=True, text=True).stdout


def run_benchmark(port, pid, requests, pipeline, tests=TESTS):
    cmd = ["redis-benchmark", "-p", str(port), "-q", "--csv", "-n", str(requests), "-c", "50", "-t", tests]
    if pipeline > 1:
        cmd += ["-P", str(pipeline)]
    before = cpu_seconds(pid)
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    cpu = cpu_seconds(pid) - before
    rps = {}
    for line in out.splitlines():
        parts = [x.strip('"') for x in line.split(",")]
        if len(parts) >= 2 and parts[0] != "test":
            rps[parts[0]] = float(parts[1])
    total = requests * len(rps)
    return rps, cpu / total * 1e6 if total else 0.0


resp = benchlib.resp


def pipe_commands(port, commands):
    p = subprocess.Popen(["redis-cli", "-p", str(port), "--pipe"], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    buf = []
    for c in commands:
        buf.append(c)
        if len(buf) == 10000:
            p.stdin.write(b"".join(buf))
            buf = []
    p.stdin.write(b"".join(buf))
    p.stdin.close()
    p.wait()


# The collection data sets of issue 3's memory comparison.
DATASETS = {
    "100k hashes x 10 small fields": lambda: (resp("HSET", "h:%d" % i, *[x for f in range(10) for x in ("f%d" % f, "v%d" % f)])
                                               for i in range(100000)),
    "100k lists x 20 small elements": lambda: (resp("RPUSH", "l:%d" % i, *["e%d" % e for e in range(20)])
                                                for i in range(100000)),
    "100k sets x 10 integers": lambda: (resp("SADD", "s:%d" % i, *[str(i * 10 + e) for e in range(10)])
                                         for i in range(100000)),
    "one zset x 1M members": lambda: (resp("ZADD", "z", *[x for m in range(j, j + 100) for x in (str(m * 0.5), "m%d" % m)])
                                      for j in range(0, 1000000, 100)),
}


def load_keys(port, n):
    """1M SETs through redis-cli --pipe (raw RESP)."""
    pipe_commands(port, (resp("SET", b"key:%012d" % i, "xxx") for i in range(n)))


def info_field(port, field):
    for line in cli(port, "INFO", "memory").splitlines():
        if line.startswith(field + ":"):
            return int(line.split(":")[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--server", default=os.path.join(ROOT, "src", "redis-like-server"))
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--types", action="store_true", help="also the data-type suite and collection memory")
    ap.add_argument("--base", help="an earlier build of ours, measured in the same runs")
    a = ap.parse_args()
    servers = {"ours": start(a.server), "redis": start("/usr/bin/redis-server")}
    if a.base:
        servers["base"] = start(a.base)
    names = list(servers)
    try:
        suites = [TESTS] + ([TYPE_TESTS] if a.types else [])
        for tests, pipeline in [(t, p) for t in suites for p in (1, 16)]:
            results = {name: [] for name in servers}
            cpus = {name: [] for name in servers}
            for run in range(a.runs):
                for name in names[run % len(names):] + names[:run % len(names)]:
                    p, port = servers[name]
                    cli(port, "FLUSHALL")
                    rps, cpu = run_benchmark(port, p.pid, a.requests, pipeline, tests)
                    results[name].append(rps)
                    cpus[name].append(cpu)
            print(f"\n### redis-benchmark -q -n {a.requests} -c 50 -t {tests}" + (f" -P {pipeline}" if pipeline > 1 else ""))
            print(f"medians of {a.runs} runs, requests/s\n")
            extra_head = " base | ours/base |" if a.base else ""
            print("| test | redis-like | redis 7.0.15 | ratio |" + extra_head)
            print("| --- | ---: | ---: | ---: |" + (" ---: | ---: |" if a.base else ""))

            def row(label, ours, theirs, base, fmt):
                extra = f" {base:{fmt}} | {ours / base:.2f} |" if a.base else ""
                print(f"| {label} | {ours:{fmt}} | {theirs:{fmt}} | {ours / theirs:.2f} |" + extra)

            def med_rps(name, test):
                return statistics.median(r.get(test, 0) for r in results[name]) if name in results else 0

            for test in results["ours"][0]:
                row(test, med_rps("ours", test), med_rps("redis", test), med_rps("base", test), ",.0f")
            row("server CPU-s per 1M requests", statistics.median(cpus["ours"]), statistics.median(cpus["redis"]),
                statistics.median(cpus["base"]) if a.base else 0, ".2f")
            for name in names:
                print(f"per-run CPU-s/1M {name}: " + " ".join(f"{x:.2f}" for x in cpus[name]))
        if not a.skip_memory:
            print(f"\n### used_memory per key, {a.keys} keys key:%012d with 3-byte values\n")
            print("| server | used_memory | bytes/key |")
            print("| --- | ---: | ---: |")
            per = {}
            for name, (p, port) in servers.items():
                cli(port, "FLUSHALL")
                base = info_field(port, "used_memory")
                load_keys(port, a.keys)
                dbsize = int(cli(port, "DBSIZE").strip() or 0)
                used = info_field(port, "used_memory")
                per[name] = (used - base) / max(dbsize, 1)
                print(f"| {name} | {used:,} | {per[name]:.1f} |")
            print(f"| ratio ours/redis | | {per['ours'] / per['redis']:.2f} |")
        if a.types:
            print("\n### used_memory of collection data sets (after FLUSHALL, minus the empty server)\n")
            print("| data set | redis-like | redis 7.0.15 | ratio |")
            print("| --- | ---: | ---: | ---: |")
            for label, gen in DATASETS.items():
                used = {}
                for name, (p, port) in servers.items():
                    cli(port, "FLUSHALL")
                    base = info_field(port, "used_memory")
                    pipe_commands(port, gen())
                    used[name] = info_field(port, "used_memory") - base
                print(f"| {label} | {used['ours']:,} | {used['redis']:,} | {used['ours'] / used['redis']:.2f} |")
    finally:
        benchlib.stop_all([p for p, _ in servers.values()])


if __name__ == "__main__":
    sys.exit(main())
