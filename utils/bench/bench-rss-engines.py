#!/usr/bin/python3
"""bench-rss-engines.py: the memory a server holds after a bulk load, on
each socket engine (io-engine io_uring and epoll), side by side in one run
(issue 49's acceptance).

For every binary given (--server, and --baseline if given) and each engine
it starts a fresh server on a free loopback port, reads VmRSS
(/proc/PID/status) and used_memory, loads N keys (key:%012d, 16 bytes,
3-byte values) through redis-cli --pipe, and once every server is loaded
waits --idle seconds (one wait for all) before reading again: VmRSS,
used_memory_rss, mem_fragmentation_ratio, mem_io_buffers, and the RSS
growth per key.  Nothing here passes or fails; the figures go to
BENCHMARKS.md.

usage: utils/bench/bench-rss-engines.py [--keys 1000000] [--idle 20]
                                  [--server src/redis-like-server]
                                  [--baseline OTHER-BINARY]
"""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def vm_rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def info(port):
    out = subprocess.run(["redis-cli", "-p", str(port), "INFO", "everything"], capture_output=True, text=True,
                         timeout=30).stdout
    return dict(line.split(":", 1) for line in out.splitlines() if ":" in line and not line.startswith("#"))


def load(port, payload):
    p = subprocess.Popen(["redis-cli", "-p", str(port), "--pipe"], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p.communicate(payload)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--idle", type=float, default=20)
    ap.add_argument("--server", default=os.path.join(benchlib.ROOT, "src", "redis-like-server"))
    ap.add_argument("--baseline", default="")
    a = ap.parse_args()
    payload = b"".join(benchlib.resp("SET", b"key:%012d" % i, "xxx") for i in range(a.keys))
    binaries = [("this", a.server)] + ([("baseline", a.baseline)] if a.baseline else [])
    runs = []
    try:
        for label, binary in binaries:
            for engine in ("io_uring", "epoll"):
                s = benchlib.Server(binary, ["--appendonly", "no", "--io-engine", engine], log=False,
                                    prefix="rss-engines-")
                runs.append({"label": label, "engine": engine, "server": s, "rss0": vm_rss(s.proc.pid),
                             "used0": int(info(s.port)["used_memory"])})
                load(s.port, payload)
        time.sleep(a.idle)
        print("| binary | engine | VmRSS MB | RSS per key | used_memory per key | mem_fragmentation_ratio "
              "| mem_io_buffers KB | used_memory_rss MB |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in runs:
            s = r["server"]
            rss1, inf = vm_rss(s.proc.pid), info(s.port)
            print("| %s | %s | %.1f | %.1f | %.1f | %s | %s | %.1f |" % (
                r["label"], r["engine"], rss1 / 1e6, (rss1 - r["rss0"]) / a.keys,
                (int(inf["used_memory"]) - r["used0"]) / a.keys, inf["mem_fragmentation_ratio"],
                "%.0f" % (int(inf["mem_io_buffers"]) / 1024) if "mem_io_buffers" in inf else "-",
                int(inf["used_memory_rss"]) / 1e6))
    finally:
        for r in runs:
            r["server"].remove()


if __name__ == "__main__":
    main()
