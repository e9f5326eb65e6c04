#!/usr/bin/python3
"""bench-sizehist-overhead.py: what zmalloc's live size histogram costs.

Runs Debian's redis-benchmark against two server binaries, the same tree
built with and without the counting (the one without as --base:
`make -C src BUILD_DIR=../build/nohist CFLAGS=-DRL_NO_SIZEHIST server`),
in alternating rounds so that load on the shared machine hits both alike.  Each round starts a fresh
server on a free 127.0.0.1 port, runs SET and GET pipelined (-P 16, where
the server's CPU is the limit) and unpipelined, and stops it by its pid.
Prints, per test, the medians of requests/s and of the server's CPU time per
request (INFO cpu before and after: on a shared machine the CPU a server
spends is steadier than the throughput it reaches) and the ratios new/base.

  utils/bench/bench-sizehist-overhead.py --base build/nohist/redis-like-server \\
      --new build/ebbmalloc/redis-like-server --rounds 7
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def server_cpu(port):
    info = redis.Redis(port=port).info("cpu")
    return info["used_cpu_user"] + info["used_cpu_sys"]


def bench(port, pipeline, n):
    """{test: (requests/s, server CPU microseconds per request)} for SET and
    GET, one redis-benchmark run each."""
    res = {}
    for test in ("set", "get"):
        cpu0 = server_cpu(port)
        out = subprocess.run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-t", test,
                              "-n", str(n), "-c", "50", "-P", str(pipeline), "-r", "100000",
                              "-d", "32", "--csv"], capture_output=True, text=True, timeout=300,
                             check=True).stdout
        cpu = server_cpu(port) - cpu0
        cells = [c.strip('"') for c in out.splitlines()[1].split(",")]
        res[cells[0]] = (float(cells[1]), cpu * 1e6 / n)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="server without the histogram")
    ap.add_argument("--new", required=True, help="server with the histogram")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--n", type=int, default=300000, help="requests per pipelined test")
    a = ap.parse_args()
    runs = {(who, p, t): [] for who in ("base", "new") for p in (16, 1) for t in ("SET", "GET")}
    cpu = {k: [] for k in runs}
    with tempfile.TemporaryDirectory() as d:
        for rnd in range(a.rounds):
            order = ("base", "new") if rnd % 2 == 0 else ("new", "base")
            for who in order:
                srv = benchlib.Server(a.base if who == "base" else a.new, ["--appendonly", "no"], workdir=d,
                                      log=False, timeout=10)
                port = srv.port
                try:
                    for p, n in ((16, a.n), (1, a.n // 6)):
                        for t, (rps, us) in bench(port, p, n).items():
                            runs[(who, p, t)].append(rps)
                            cpu[(who, p, t)].append(us)
                finally:
                    srv.stop()
            print(f"round {rnd + 1}/{a.rounds} done", flush=True)
    print(f"\nmedians of {a.rounds} alternating rounds")
    print("| test | pipeline | req/s without | req/s with | ratio | server CPU us/req without | with | ratio |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for p in (16, 1):
        for t in ("SET", "GET"):
            b = statistics.median(runs[("base", p, t)])
            n = statistics.median(runs[("new", p, t)])
            cb = statistics.median(cpu[("base", p, t)])
            cn = statistics.median(cpu[("new", p, t)])
            print(f"| {t} | {p} | {b:,.0f} | {n:,.0f} | {n / b:.3f} | {cb:.2f} | {cn:.2f} | {cn / cb:.3f} |")


if __name__ == "__main__":
    main()
