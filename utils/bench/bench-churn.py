#!/usr/bin/python3
"""bench-churn.py: fragmentation after churn that nobody clears (issue 49).

One server with its build's default settings (plus --args) on a free
loopback port: fill --keys small keys (key:%012d, 3-byte values), delete
every other one, add --big keys of 700-byte values, delete every third of
those (all through redis-cli --pipe), then poll INFO every --every
seconds for --wait seconds and print mem_fragmentation_ratio,
allocator_frag_ratio, active defrag's state and hits, and the first time
mem_fragmentation_ratio reached --target.  Nothing passes or fails; the
figures go to BENCHMARKS.md.

usage: utils/bench/bench-churn.py [--server src/redis-like-server] [--keys 1000000]
                            [--big 300000] [--wait 40] [--args "--activedefrag yes"]
"""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def info(port):
    out = subprocess.run(["redis-cli", "-p", str(port), "INFO", "everything"], capture_output=True, text=True,
                         timeout=30).stdout
    return dict(line.split(":", 1) for line in out.splitlines() if ":" in line and not line.startswith("#"))


def pipe(port, commands):
    p = subprocess.Popen(["redis-cli", "-p", str(port), "--pipe"], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p.communicate(b"".join(commands))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", default=os.path.join(benchlib.ROOT, "src", "redis-like-server"))
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--big", type=int, default=300000)
    ap.add_argument("--wait", type=float, default=40)
    ap.add_argument("--every", type=float, default=5)
    ap.add_argument("--target", type=float, default=1.15)
    ap.add_argument("--args", default="")
    a = ap.parse_args()
    resp = benchlib.resp
    s = benchlib.Server(a.server, ["--appendonly", "no"] + a.args.split(), log=False, prefix="churn-")
    try:
        pipe(s.port, (resp("SET", b"key:%012d" % i, "xxx") for i in range(a.keys)))
        pipe(s.port, (resp("DEL", b"key:%012d" % i) for i in range(0, a.keys, 2)))
        big = b"v" * 700
        pipe(s.port, (resp("SET", b"big:%012d" % i, big) for i in range(a.big)))
        pipe(s.port, (resp("DEL", b"big:%012d" % i) for i in range(0, a.big, 3)))
        t0, reached = time.time(), None
        inf = info(s.port)
        print("allocator %s, activedefrag %s, used_memory %.1f MB" % (
            inf["mem_allocator"], subprocess.run(["redis-cli", "-p", str(s.port), "CONFIG", "GET", "activedefrag"],
                                                 capture_output=True, text=True).stdout.split()[-1],
            int(inf["used_memory"]) / 1e6))
        print("| s after the last delete | mem_fragmentation_ratio | allocator_frag_ratio | used_memory_rss MB "
              "| active_defrag_running | active_defrag_hits |")
        print("| --- | --- | --- | --- | --- | --- |")
        while True:
            t = time.time() - t0
            inf = info(s.port)
            ratio = float(inf["mem_fragmentation_ratio"])
            if reached is None and ratio <= a.target:
                reached = t
            print("| %.0f | %s | %s | %.1f | %s | %s |" % (t, inf["mem_fragmentation_ratio"], inf["allocator_frag_ratio"],
                                                        int(inf["used_memory_rss"]) / 1e6, inf["active_defrag_running"],
                                                        inf["active_defrag_hits"]))
            if t >= a.wait:
                break
            time.sleep(a.every)
        print("mem_fragmentation_ratio <= %.2f after: %s" % (a.target, "%.0f s" % reached if reached is not None
                                                             else "not within %.0f s" % a.wait))
    finally:
        s.remove()


if __name__ == "__main__":
    main()
