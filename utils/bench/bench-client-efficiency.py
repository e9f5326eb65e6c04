#!/usr/bin/python3
"""bench-client-efficiency.py: client CPU of redis-like-benchmark vs redis-benchmark.

Starts one Debian redis-server on a free loopback port (the server stays the
same for every run, so only the clients differ), then, for each pipeline
depth, runs redis-benchmark and our tool (once per --engines entry)
alternately --runs times with the same `-c -n -t` arguments.  Each client's
CPU (user+sys) comes from getrusage of that child alone (os.wait4), so
other jobs on a shared machine do not leak into the figure; throughput is the
mean of the per-test requests/s the client prints with -q.  Prints one
markdown table of medians and ratios (ours vs redis-benchmark).  Used by hand
for BENCHMARKS.md; kills only the server it started, by pid.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = benchlib.ROOT


RPS = re.compile(r"^([A-Z_]+): ([\d.]+) requests per second", re.M)


def run_client(argv):
    """Runs one client; returns (cpu seconds, wall seconds, {test: rps})."""
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, ru = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)   # reaped here, not by Popen
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        sys.exit("%s failed (%d): %s" % (argv[0], proc.returncode, err.decode(errors="replace")))
    # redis-benchmark redraws a progress line with \r; only final lines count.
    text = out.decode(errors="replace").replace("\r", "\n")
    rps = {m.group(1): float(m.group(2)) for m in RPS.finditer(text)}
    return ru.ru_utime + ru.ru_stime, wall, rps


def fmt_row(cells):
    return "| " + " | ".join(cells) + " |"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("-n", "--requests", type=int, default=1000000)
    ap.add_argument("-c", "--clients", type=int, default=50)
    ap.add_argument("-t", "--tests", default="set,get")
    ap.add_argument("--pipelines", default="1,16", help="comma separated -P values")
    ap.add_argument("--engines", default="auto",
                    help="comma separated --engine values for our tool (auto,uring,epoll; "
                         "default = pass no --engine)")
    ap.add_argument("--tool", default=os.path.join(ROOT, "src", "redis-like-benchmark"))
    ap.add_argument("--redis-benchmark", default="/usr/bin/redis-benchmark")
    ap.add_argument("--server", default="/usr/bin/redis-server")
    a = ap.parse_args()

    ntests = len(a.tests.split(","))
    per_m = 1e6 / (a.requests * ntests)   # CPU-s per 1M requests
    server = benchlib.Server(a.server, log=False, prefix="bench-client-")  # free port, +PONG waited for
    port = server.port
    rows = []
    try:
        for p in [int(x) for x in a.pipelines.split(",")]:
            common = ["-p", str(port), "-c", str(a.clients), "-n", str(a.requests),
                      "-t", a.tests, "-P", str(p), "-q"]
            clients = [("redis-benchmark", [a.redis_benchmark] + common)]
            for e in a.engines.split(","):
                flag = [] if e == "default" else ["--engine", e]   # default: build without --engine
                clients.append(("redis-like-benchmark " + e, [a.tool] + common + flag))
            samples = {name: [] for name, _ in clients}
            for r in range(a.runs):
                for name, argv in clients:
                    cpu, wall, rps = run_client(argv)
                    mean_rps = statistics.mean(rps.values()) if rps else 0.0
                    samples[name].append((cpu * per_m, mean_rps))
                    print("P=%d run %d %-28s %6.2f CPU-s/1M  %10.0f rps  (%.1f s)"
                          % (p, r + 1, name, cpu * per_m, mean_rps, wall), file=sys.stderr)
            base_cpu = statistics.median(s[0] for s in samples["redis-benchmark"])
            base_rps = statistics.median(s[1] for s in samples["redis-benchmark"])
            for name, _ in clients:
                cpu = statistics.median(s[0] for s in samples[name])
                rps = statistics.median(s[1] for s in samples[name])
                rows.append((p, name, cpu, rps, base_cpu / cpu if cpu else 0,
                             rps / base_rps if base_rps else 0,
                             ", ".join("%.2f" % s[0] for s in samples[name])))
    finally:
        server.remove()

    print(fmt_row(["-P", "client", "CPU-s per 1M req (median)", "rps (median)",
                   "efficiency vs redis-benchmark", "throughput vs redis-benchmark",
                   "CPU-s per run"]))
    print(fmt_row(["---:", "---", "---:", "---:", "---:", "---:", "---"]))
    for p, name, cpu, rps, eff, thr, runs in rows:
        print(fmt_row([str(p), name, "%.2f" % cpu, "%.0f" % rps, "%.2fx" % eff,
                       "%.2fx" % thr, runs]))


if __name__ == "__main__":
    main()
