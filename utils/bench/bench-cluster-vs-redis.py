#!/usr/bin/python3
"""bench-cluster-vs-redis.py: a 3-master cluster of redis-like nodes against
a 3-master cluster of Debian's redis-server 7.0.15, both made by
redis-cli --cluster create on loopback and driven by Debian's
`redis-benchmark --cluster` (SET and GET, -c 50, random keys), without
pipelining and with -P 16 (issue 45's benchmark).

For every (pipeline, command) the servers take turns, the order
rotating each run; a run is one redis-benchmark invocation of one command.
Figures are medians over the runs: requests/s as redis-benchmark reports
it, and server CPU per request, the sum over the three nodes of
utime+stime (/proc/<pid>/stat) across the run divided by the requests.
Ratios are ours/Redis (rps above 1 and CPU below 1 favour ours).  The load
average before and after is printed: the machine may be shared.

--single adds one plain node of each (cluster mode off, plain
redis-benchmark) to the same rotation, so the cluster CPU ratio can be
held against the single-node one measured in the same run (the issue asks
for the two within 0.05).

Usage: utils/bench/bench-cluster-vs-redis.py [--runs 3] [--requests N]
       [--requests-pipelined N] [--pipeline 1 16] [--single] [--server PATH] [--redis PATH]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "..", "..", "src", "redis-like-server")
REDIS = "/usr/bin/redis-server"


def cluster_ok(port):
    out = subprocess.run(["redis-cli", "-p", str(port), "cluster", "info"], capture_output=True, text=True).stdout
    return out.startswith("cluster_state:ok")


class Single:
    """One node of a binary with cluster mode off (--single)."""

    cluster = False

    def __init__(self, name, binary):
        self.name = name
        self.nodes = [benchlib.Server(binary, log=False)]

    def cpu(self):
        return sum(s.cpu_seconds() for s in self.nodes)

    def stop(self):
        for s in self.nodes:
            s.stop()
            s.remove()


class Cluster(Single):
    """Three masters of one binary, each with its own free port and bus port."""

    cluster = True

    def __init__(self, name, binary):
        self.name = name
        self.nodes = []
        for _ in range(3):
            self.nodes.append(benchlib.Server(binary, ["--cluster-enabled", "yes", "--cluster-port",
                                                       str(benchlib.free_port()), "--cluster-node-timeout", "15000",
                                                       "--cluster-config-file", "nodes.conf"], log=False))
        out = subprocess.run(["redis-cli", "--cluster", "create"] + ["127.0.0.1:%d" % s.port for s in self.nodes]
                             + ["--cluster-yes"], capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            self.stop()
            raise RuntimeError("%s: redis-cli --cluster create failed\n%s%s" % (name, out.stdout, out.stderr))
        t0 = time.monotonic()
        while not all(cluster_ok(s.port) for s in self.nodes):
            if time.monotonic() - t0 > 60:
                self.stop()
                raise RuntimeError("%s: cluster_state never ok" % name)
            time.sleep(0.2)


def one_run(cl, test, pipeline, requests):
    """(requests/s, server CPU us per request) of one redis-benchmark run."""
    cmd = ["redis-benchmark"] + (["--cluster"] if cl.cluster else []) + [
        "-p", str(cl.nodes[0].port), "-t", test, "-n", str(requests), "-c", "50", "-P", str(pipeline), "-r", "100000",
        "--csv"]
    c0 = cl.cpu()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    c1 = cl.cpu()
    rps = None
    for line in out.stdout.splitlines():
        f = [x.strip('"') for x in line.split(",")]
        if f and f[0] == test.upper():
            rps = float(f[1])
    if out.returncode != 0 or rps is None or "rror" in out.stderr:
        raise RuntimeError("%s: %s failed\n%s%s" % (cl.name, " ".join(cmd), out.stdout, out.stderr))
    return rps, (c1 - c0) / requests * 1e6


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=200000, help="per run without pipelining")
    ap.add_argument("--requests-pipelined", type=int, default=1000000, help="per run with -P above 1")
    ap.add_argument("--pipeline", type=int, nargs="+", default=[1, 16])
    ap.add_argument("--single", action="store_true", help="also one plain node of each, same rotation")
    ap.add_argument("--server", default=SERVER)
    ap.add_argument("--redis", default=REDIS)
    a = ap.parse_args()
    print("load average before: %s (%d CPUs)" % (loadavg(), os.cpu_count()))
    clusters = []
    try:
        clusters.append(Cluster("ours", a.server))
        clusters.append(Cluster("redis", a.redis))
        if a.single:
            clusters.append(Single("ours-single", a.server))
            clusters.append(Single("redis-single", a.redis))
        rows = []
        for p in a.pipeline:
            n = a.requests if p == 1 else a.requests_pipelined
            for test in ("set", "get"):
                got = {c.name: [] for c in clusters}
                for run in range(a.runs):
                    k = run % len(clusters)  # each takes each place in turn
                    order = clusters[k:] + clusters[:k]
                    for cl in order:
                        got[cl.name].append(one_run(cl, test, p, n))
                med = {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
                       for k, v in got.items()}
                rows.append((test.upper(), p, n, med, got))
        print("load average after: %s" % loadavg())
        print()
        print("| test | -P | requests/run | ours rps | redis rps | rps ours/redis | ours CPU us/req | "
              "redis CPU us/req | CPU ours/redis |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for test, p, n, med, _ in rows:
            o, r = med["ours"], med["redis"]
            print("| %s | %d | %d | %.0f | %.0f | %.2f | %.3f | %.3f | %.2f |" % (
                test, p, n, o[0], r[0], o[0] / r[0], o[1], r[1], o[1] / r[1]))
        if a.single:
            print()
            print("| test | -P | single CPU ours/redis | cluster CPU ours/redis | difference |")
            print("| --- | ---: | ---: | ---: | ---: |")
            for test, p, n, med, _ in rows:
                single = med["ours-single"][1] / med["redis-single"][1]
                clu = med["ours"][1] / med["redis"][1]
                print("| %s | %d | %.2f | %.2f | %+.2f |" % (test, p, single, clu, clu - single))
        print()
        for test, p, _, _, got in rows:
            print("%s -P %d runs: %s" % (test, p, "; ".join(
                "%s %s" % (k, " ".join("%.0f/%.3f" % x for x in v)) for k, v in got.items())))
    finally:
        for cl in clusters:
            cl.stop()


if __name__ == "__main__":
    main()
