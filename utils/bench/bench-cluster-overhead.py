#!/usr/bin/python3
"""bench-cluster-overhead.py: server CPU per request of one redis-like node
with cluster-enabled yes (all 16384 slots its own) against the same build
with cluster mode off, driven by Debian's redis-benchmark (SET and GET,
-c 50, random keys) on loopback; rounds alternate, medians and the ratio.

Usage: utils/bench/bench-cluster-overhead.py [--requests N] [--rounds R] [--pipeline P ...]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

SERVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "redis-like-server")


def cpu_per_request(cluster, pipeline, requests):
    extra = ["--cluster-enabled", "yes", "--cluster-port", str(benchlib.free_port())] if cluster else []
    s = benchlib.Server(SERVER, extra)
    try:
        if cluster:
            subprocess.run(["redis-cli", "-p", str(s.port), "cluster", "addslotsrange", "0", "16383"],
                           capture_output=True, check=True)
            while b"cluster_state:ok" not in subprocess.run(["redis-cli", "-p", str(s.port), "cluster", "info"],
                                                            capture_output=True).stdout:
                time.sleep(0.1)
        c0 = s.cpu_seconds()
        subprocess.run(["redis-benchmark", "-p", str(s.port), "-t", "set,get", "-n", str(requests), "-c", "50",
                        "-P", str(pipeline), "-q", "-r", "100000"], capture_output=True, timeout=300, check=True)
        return (s.cpu_seconds() - c0) / (2 * requests) * 1e6
    finally:
        s.stop()
        s.remove()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pipeline", type=int, nargs="+", default=[16])
    a = ap.parse_args()
    for p in a.pipeline:
        off, on = [], []
        for _ in range(a.rounds):
            off.append(cpu_per_request(False, p, a.requests))
            on.append(cpu_per_request(True, p, a.requests))
        print("-P %d: us CPU per request, cluster off %.3f, on %.3f, ratio %.3f (rounds off %s, on %s)" % (
            p, statistics.median(off), statistics.median(on), statistics.median(on) / statistics.median(off),
            " ".join("%.3f" % x for x in off), " ".join("%.3f" % x for x in on)))


if __name__ == "__main__":
    main()
