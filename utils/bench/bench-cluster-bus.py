#!/usr/bin/python3
"""bench-cluster-bus.py: what the cluster bus costs an idle cluster of our
nodes: bytes written per second per node (from /proc/<pid>/io's wchar, so
every write of the process: with no clients and no logging that is the
bus) and messages per second (CLUSTER INFO), for clusters of N masters
made by redis-cli --cluster create on loopback.

Usage: utils/bench/bench-cluster-bus.py [--nodes 6 12] [--seconds 10] [--timeout-ms 15000]
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


def wchar(pid):
    with open("/proc/%d/io" % pid) as f:
        return int([line for line in f if line.startswith("wchar:")][0].split()[1])


def sent(port):
    out = subprocess.run(["redis-cli", "-p", str(port), "cluster", "info"], capture_output=True, text=True).stdout
    return int([line for line in out.split() if line.startswith("cluster_stats_messages_sent:")][0].split(":")[1])


def measure(n, seconds, timeout_ms):
    nodes = [benchlib.Server(SERVER, ["--cluster-enabled", "yes", "--cluster-port", str(benchlib.free_port()),
                                      "--cluster-node-timeout", str(timeout_ms)], log=False) for _ in range(n)]
    try:
        subprocess.run(["redis-cli", "--cluster", "create"] + ["127.0.0.1:%d" % s.port for s in nodes] +
                       ["--cluster-yes"], capture_output=True, check=True, timeout=120)
        time.sleep(5)  # handshakes done, gossip settled
        w0, m0 = [wchar(s.pid) for s in nodes], [sent(s.port) for s in nodes]
        time.sleep(seconds)
        w1, m1 = [wchar(s.pid) for s in nodes], [sent(s.port) for s in nodes]
        per_node = [(b - a) / seconds for a, b in zip(w0, w1)]
        msgs = [(b - a) / seconds for a, b in zip(m0, m1)]
        return statistics.median(per_node), statistics.median(msgs)
    finally:
        for s in nodes:
            s.stop()
            s.remove()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, nargs="+", default=[6, 12])
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--timeout-ms", type=int, default=15000)
    a = ap.parse_args()
    for n in a.nodes:
        b, m = measure(n, a.seconds, a.timeout_ms)
        print("%d nodes: median per node %.0f bytes/s written, %.1f bus messages/s sent" % (n, b, m))


if __name__ == "__main__":
    main()
