#!/usr/bin/python3
"""bench-hash-ttl.py: hash field TTLs, ours against Redis 7.4.1
(utils/dev/redis74-ref.sh) in the same run, --runs times alternating
server by server; with --runs over 1 it prints the medians.

For each server:
  1. memory: N fields in one hash (the hashtable encoding), used_memory
     after the fill, then after HPEXPIREAT on every field (an absolute time
     far in the future); then the same for N/8 small hashes of 8 fields
     (listpack, listpackex).  Bytes per field and per TTL, and the ratio.
  2. CPU per call of HEXPIRE and HTTL (one field each): a hash of --keyspace
     fields f:<12 digits>, each with a TTL, then Debian's redis-benchmark
     (-c 50, -r keyspace, --calls calls with -P 1, 5 times as many with
     -P 16) sends
     HEXPIRE h 100000 FIELDS 1 f:__rand_int__ (an existing field's TTL
     moved) and HTTL h FIELDS 1 f:__rand_int__; the server's CPU from
     /proc/<pid>/stat around each, in microseconds per call.
  3. with --expire: the time active expiry takes to collect N fields of one
     hash whose TTLs all pass at once, and the server's CPU meanwhile.

Usage: utils/bench/bench-hash-ttl.py [--fields 1000000] [--expire]
       [--runs 3] [--calls 200000] [--keyspace 100000]"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "utils", "bench"))
import benchlib  # noqa: E402

FAR = 4102444800000
BATCH = 1000


def used(c):
    return int(c.info("memory")["used_memory"])


def fill_big(c, n, ttl):
    p = c.pipeline(transaction=False)
    for i in range(0, n, BATCH):
        p.hset("big", mapping={"field:%d" % j: "v%d" % j for j in range(i, min(n, i + BATCH))})
        if ttl:
            p.execute_command("HPEXPIREAT", "big", ttl, "FIELDS", min(n, i + BATCH) - i,
                              *["field:%d" % j for j in range(i, min(n, i + BATCH))])
        p.execute()


def fill_small(c, n, ttl):
    p = c.pipeline(transaction=False)
    for h in range(n // 8):
        p.hset("h:%d" % h, mapping={"f%d" % j: "v%d" % j for j in range(8)})
        if ttl:
            p.execute_command("HPEXPIREAT", "h:%d" % h, ttl, "FIELDS", 8, *["f%d" % j for j in range(8)])
        if h % 500 == 499:
            p.execute()
    p.execute()


def fill_keyspace(c, keyspace):
    p = c.pipeline(transaction=False)
    for i in range(0, keyspace, BATCH):
        names = ["f:%012d" % j for j in range(i, min(keyspace, i + BATCH))]
        p.hset("h", mapping={f: "v" for f in names})
        p.execute_command("HPEXPIREAT", "h", FAR, "FIELDS", len(names), *names)
        p.execute()


CALLS = {
    "HEXPIRE": ["HEXPIRE", "h", "100000", "FIELDS", "1", "f:__rand_int__"],
    "HTTL": ["HTTL", "h", "FIELDS", "1", "f:__rand_int__"],
}


def cpu_per_call(binary, calls, keyspace):
    """Server CPU microseconds per call, {(command, pipeline): us}."""
    out = {}
    s = benchlib.Server(binary, ["--save", ""], timeout=30, wait="any", prefix="rl-bench-hfe-")
    try:
        fill_keyspace(s.client(), keyspace)
        for name, args in CALLS.items():
            for pipeline in (1, 16):
                # pipelined calls cost less: more of them, for the same CPU clock-tick resolution
                n = calls * (5 if pipeline > 1 else 1)
                cmd = ["redis-benchmark", "-p", str(s.port), "-q", "-n", str(n), "-c", "50", "-r",
                       str(keyspace), "-P", str(pipeline)] + args
                cpu0 = benchlib.cpu_seconds(s.proc.pid)
                subprocess.run(cmd, capture_output=True, check=True)
                out[(name, pipeline)] = (benchlib.cpu_seconds(s.proc.pid) - cpu0) / n * 1e6
        # Every call hit an existing field: HTTL answers its TTL.
        ttl = s.client().execute_command("HTTL", "h", "FIELDS", 1, "f:%012d" % (keyspace - 1))
        assert ttl[0] > 0, ttl
    finally:
        s.stop()
    return out


def measure(binary, n, expire, calls, keyspace):
    out = {}
    out.update(cpu_per_call(binary, calls, keyspace))
    for shape, fill in (("one hashtable hash", fill_big), ("8-field hashes", fill_small)):
        for ttl in (0, FAR):
            s = benchlib.Server(binary, ["--save", ""], timeout=30, wait="any", prefix="rl-bench-hfe-")
            try:
                c = s.client()
                base = used(c)
                t0 = time.time()
                fill(c, n, ttl)
                out[("fill_s", shape)] = time.time() - t0
                out[(shape, bool(ttl))] = (used(c) - base) / n
            finally:
                s.stop()
    if expire:
        s = benchlib.Server(binary, ["--save", ""], timeout=30, wait="any", prefix="rl-bench-hfe-")
        try:
            c = s.client()
            # The TTLs pass well after the fill ends (it took fill_s above).
            when = int((time.time() + 3 + 2 * out[("fill_s", "one hashtable hash")]) * 1000)
            fill_big(c, n, when)
            assert time.time() * 1000 < when - 500, "the fill outran the TTLs"
            while time.time() * 1000 < when:
                time.sleep(0.01)
            cpu0 = benchlib.cpu_seconds(s.proc.pid)
            t0 = time.time()
            while c.exists("big"):
                time.sleep(0.01)
            out["expire_s"] = time.time() - t0
            out["expire_cpu_s"] = benchlib.cpu_seconds(s.proc.pid) - cpu0
        finally:
            s.stop()
    return out


def load():
    return open("/proc/loadavg").read().split()[:3]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fields", type=int, default=1000000)
    ap.add_argument("--expire", action="store_true")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--calls", type=int, default=200000)
    ap.add_argument("--keyspace", type=int, default=100000)
    a = ap.parse_args()
    ref = subprocess.run([os.path.join(ROOT, "utils", "dev", "redis74-ref.sh")], capture_output=True, text=True,
                         check=True).stdout.strip()
    print("load average before: %s" % " ".join(load()))
    runs = {"ours": [], "7.4.1": []}
    for _ in range(a.runs):
        runs["ours"].append(measure(benchlib.OURS, a.fields, a.expire, a.calls, a.keyspace))
        runs["7.4.1"].append(measure(ref, a.fields, a.expire, a.calls, a.keyspace))
    print("load average after: %s" % " ".join(load()))
    ours = {k: statistics.median(r[k] for r in runs["ours"]) for k in runs["ours"][0] if k[0] != "fill_s"}
    theirs = {k: statistics.median(r[k] for r in runs["7.4.1"]) for k in runs["7.4.1"][0] if k[0] != "fill_s"}
    if a.runs > 1:
        print("medians of %d runs (alternating ours, 7.4.1)" % a.runs)
    print("%-22s %-8s %10s %10s %6s" % ("shape", "TTL", "ours B/f", "7.4.1 B/f", "ratio"))
    for key in [k for k in ours if isinstance(k[1], bool)]:
        print("%-22s %-8s %10.1f %10.1f %6.2f" % (key[0], "yes" if key[1] else "no", ours[key], theirs[key],
                                                 ours[key] / theirs[key]))
    for shape in ("one hashtable hash", "8-field hashes"):
        o = [r[(shape, True)] - r[(shape, False)] for r in runs["ours"]]
        t = [r[(shape, True)] - r[(shape, False)] for r in runs["7.4.1"]]
        print("%s: a TTL costs ours %.1f B/field, 7.4.1 %.1f, ratio %.2f" % (
            shape, statistics.median(o), statistics.median(t), statistics.median(o) / statistics.median(t)))
    print("server CPU per call, redis-benchmark -n %d (-P 16: %d) -c 50 -r %d (one field a call):" % (
        a.calls, 5 * a.calls, a.keyspace))
    for key in [k for k in ours if k[0] in CALLS]:
        print("  %-8s -P %-2d ours %.2f us, 7.4.1 %.2f us, ratio %.2f" % (key[0], key[1], ours[key], theirs[key],
                                                                        ours[key] / theirs[key]))
    if a.expire:
        print("active expiry of %d fields: ours %.2f s (%.2f s CPU), 7.4.1 %.2f s (%.2f s CPU); ratios %.2f, %.2f" % (
            a.fields, ours["expire_s"], ours["expire_cpu_s"], theirs["expire_s"], theirs["expire_cpu_s"],
            ours["expire_s"] / theirs["expire_s"], ours["expire_cpu_s"] / theirs["expire_cpu_s"]))
    if a.runs > 1:
        for name in ("ours", "7.4.1"):
            for k in ("expire_s", "expire_cpu_s") if a.expire else ():
                print("  %s %s per run: %s" % (name, k, " ".join("%.2f" % r[k] for r in runs[name])))


if __name__ == "__main__":
    main()
