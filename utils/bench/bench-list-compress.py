#!/usr/bin/python3
"""bench-list-compress: list-compress-depth in redis-like-server against
Debian's redis-server, in the same run.

For each server and each depth (0, 1, 2), in --runs rounds (servers and
depths alternated, a fresh server each time):
  1. RPUSH --entries log-line values (pipelined batches of 1000): the
     server's CPU seconds for it and used_memory after, minus the empty
     server's (bytes per entry);
  2. --reads random LINDEX calls and as many LRANGE of 10 entries at random
     places (most land on compressed nodes): the server's CPU microseconds
     per call.
Medians are printed as Markdown rows for BENCHMARKS.md, with ours/Redis
ratios.  Only 127.0.0.1; every step is bounded by the counts given.

usage: utils/bench/bench-list-compress.py [--runs 3] [--entries 1000000] [--reads 20000]
                                    [--server src/redis-like-server]
"""
import argparse
import os
import random
import statistics
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "utils", "bench"))
import benchlib  # noqa: E402

REDIS = "/usr/bin/redis-server"
DEPTHS = (0, 1, 2)


def value(i):
    return "2026-12-04T20:%02d:%02d.%03dZ INFO request id=%08d path=/api/v1/items/%d status=200" % (
        (i // 60000) % 60, (i // 1000) % 60, i % 1000, i, i % 5000)


def measure(binary, depth, entries, reads, seed):
    srv = benchlib.Server(binary, ["--save", "", "--appendonly", "no", "--list-compress-depth", str(depth)],
                          timeout=10, wait="pong", prefix="bench-lc-")
    try:
        c = srv.client()
        base = c.info("memory")["used_memory"]
        cpu0 = srv.cpu_seconds()
        for start in range(0, entries, 1000):
            c.rpush("log", *[value(i) for i in range(start, min(entries, start + 1000))])
        fill_cpu = srv.cpu_seconds() - cpu0
        used = c.info("memory")["used_memory"] - base
        rng = random.Random(seed)
        p = c.pipeline(transaction=False)
        cpu0 = srv.cpu_seconds()
        for _ in range(reads):
            p.lindex("log", rng.randrange(entries))
            if len(p) == 500:
                p.execute()
        p.execute()
        lindex_us = (srv.cpu_seconds() - cpu0) / reads * 1e6
        cpu0 = srv.cpu_seconds()
        for _ in range(reads):
            start = rng.randrange(entries - 10)
            p.lrange("log", start, start + 9)
            if len(p) == 500:
                p.execute()
        p.execute()
        lrange_us = (srv.cpu_seconds() - cpu0) / reads * 1e6
        assert c.llen("log") == entries and c.lindex("log", entries // 2) == value(entries // 2)
        return {"bytes": used / entries, "fill_cpu": fill_cpu, "lindex_us": lindex_us, "lrange_us": lrange_us}
    finally:
        srv.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--entries", type=int, default=1000000)
    ap.add_argument("--reads", type=int, default=20000)
    ap.add_argument("--server", default=os.path.join(ROOT, "src", "redis-like-server"))
    a = ap.parse_args()
    results = {}
    for run in range(a.runs):
        for depth in DEPTHS:
            for name, binary in (("ours", a.server), ("redis", REDIS)):
                r = measure(binary, depth, a.entries, a.reads, 1000 * run + depth)
                results.setdefault((name, depth), []).append(r)
                print("run %d depth %d %-5s %s" % (run, depth, name, {k: round(v, 2) for k, v in r.items()}),
                      file=sys.stderr)
    med = {k: {f: statistics.median(x[f] for x in v) for f in v[0]} for k, v in results.items()}
    print("| list-compress-depth | B/entry ours | B/entry Redis | ratio | fill CPU-s ours / Redis | "
          "LINDEX CPU-us ours / Redis | LRANGE 10 CPU-us ours / Redis |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for d in DEPTHS:
        o, r = med[("ours", d)], med[("redis", d)]
        print("| %d | %.1f | %.1f | %.2f | %.2f / %.2f | %.1f / %.1f | %.1f / %.1f |" % (
            d, o["bytes"], r["bytes"], o["bytes"] / r["bytes"], o["fill_cpu"], r["fill_cpu"],
            o["lindex_us"], r["lindex_us"], o["lrange_us"], r["lrange_us"]))


if __name__ == "__main__":
    main()
