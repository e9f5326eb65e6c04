#!/usr/bin/python3
"""bench-hash-ttl.py: memory of hash fields with and without field TTLs,
ours against Redis 7.4.1 (utils/dev/redis74-ref.sh) in the same run.

For each server: N fields in one hash (the hashtable encoding), used_memory
after the fill, then after HPEXPIREAT on every field (an absolute time far
in the future); then the same for N/8 small hashes of 8 fields (listpack,
listpackex).  Prints bytes per field and per TTL for each, and the ratio.
With --expire, the time active expiry takes to collect N fields whose TTLs
all pass at once, and the server's CPU meanwhile.

Usage: utils/bench/bench-hash-ttl.py [--fields 1000000] [--expire]"""
import argparse
import os
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


def measure(binary, n, expire):
    out = {}
    for shape, fill in (("one hashtable hash", fill_big), ("8-field hashes", fill_small)):
        for ttl in (0, FAR):
            s = benchlib.Server(binary, ["--save", ""], timeout=30, wait="any", prefix="rl-bench-hfe-")
            try:
                c = s.client()
                base = used(c)
                fill(c, n, ttl)
                out[(shape, bool(ttl))] = (used(c) - base) / n
            finally:
                s.stop()
    if expire:
        s = benchlib.Server(binary, ["--save", ""], timeout=30, wait="any", prefix="rl-bench-hfe-")
        try:
            c = s.client()
            when = int(time.time() * 1000) + 20000 + n // 50
            fill_big(c, n, when)
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fields", type=int, default=1000000)
    ap.add_argument("--expire", action="store_true")
    a = ap.parse_args()
    ref = subprocess.run([os.path.join(ROOT, "utils", "dev", "redis74-ref.sh")], capture_output=True, text=True,
                         check=True).stdout.strip()
    ours = measure(benchlib.OURS, a.fields, a.expire)
    theirs = measure(ref, a.fields, a.expire)
    print("%-22s %-8s %10s %10s %6s" % ("shape", "TTL", "ours B/f", "7.4.1 B/f", "ratio"))
    for key in [k for k in ours if isinstance(k, tuple)]:
        print("%-22s %-8s %10.1f %10.1f %6.2f" % (key[0], "yes" if key[1] else "no", ours[key], theirs[key],
                                                 ours[key] / theirs[key]))
    for shape in ("one hashtable hash", "8-field hashes"):
        print("%s: a TTL costs ours %.1f B/field, 7.4.1 %.1f" % (
            shape, ours[(shape, True)] - ours[(shape, False)], theirs[(shape, True)] - theirs[(shape, False)]))
    if a.expire:
        print("active expiry of %d fields: ours %.2f s (%.2f s CPU), 7.4.1 %.2f s (%.2f s CPU)" % (
            a.fields, ours["expire_s"], ours["expire_cpu_s"], theirs["expire_s"], theirs["expire_cpu_s"]))


if __name__ == "__main__":
    main()
