#!/usr/bin/python3
"""bench-repl.py: replication against Debian's redis-server 7.0.15 in the
same run (BENCHMARKS.md, "Replication").

  1. full sync time of KEYS mixed keys (70% strings, 30% small hashes,
     lists, sets, sorted sets), disk and diskless: a fresh replica of the
     same implementation is attached and timed from REPLICAOF until its
     master_link_status is up;
  2. replication lag under a redis-benchmark write load (SET, 50 clients,
     pipeline 16): master_repl_offset minus the replica's offset, sampled
     every 50 ms (median and max bytes), and how long the replica takes to
     catch up once the load stops;
  3. master throughput (redis-benchmark SET requests/s) with 0, 1 and 2
     replicas attached.
Each figure is the median of RUNS runs; ratios are ours / Redis's (sync
time and lag: lower is better; throughput: higher is better).  Servers
run on free loopback ports and are stopped by pid.

Full syncs are timed for a disk transfer, a diskless one loaded by the
replica after it arrived (repl-diskless-load disabled, the default), and
diskless ones loaded from the socket as they arrive (on-empty-db, swapdb);
both implementations use the same settings and take turns run by run.
Besides the wall time, the CPU seconds the sync cost (master, its RDB
child, replica; from /proc) are reported: on a shared, overloaded machine
the wall time is mostly waiting for a core.

Usage: utils/bench/bench-repl.py [--keys 1000000] [--runs 3] [--requests 300000]
                           [--sync-only] [--modes disk,diskless,on-empty-db,swapdb]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT, OURS, REDIS = benchlib.ROOT, benchlib.OURS, benchlib.REDIS


class Server(benchlib.Server):
    """A server on a free loopback port (benchlib.py), its log in its own
    directory, .c a client; remove() stops it and deletes the directory."""

    def __init__(self, binary, args=()):
        super().__init__(binary, ["--appendonly", "no", "--repl-diskless-sync-delay", "0"] + list(args),
                         prefix="bench-repl-", timeout=60)
        self.c = self.client(socket_timeout=120)


resp = benchlib.resp


def dataset_file(nkeys, path):
    with open(path, "wb") as f:
        for i in range(nkeys):
            kind = i % 10
            if kind < 7:
                f.write(resp("SET", "s:%d" % i, "value-%d-%s" % (i, "x" * 20)))
            elif kind == 7:
                f.write(resp("HSET", "h:%d" % i, "a", i, "b", "bee", "c", i * 2))
            elif kind == 8:
                f.write(resp("RPUSH", "l:%d" % i, "one", "two", i))
            elif i % 20 == 9:
                f.write(resp("SADD", "set:%d" % i, "m1", "m2", i))
            else:
                f.write(resp("ZADD", "z:%d" % i, 1, "a", 2.5, "b", i, "c"))


def load(server, path):
    with open(path, "rb") as f:
        subprocess.run(["redis-cli", "-p", str(server.port), "--pipe"], stdin=f, check=True,
                       stdout=subprocess.DEVNULL)


def wait_up(c, timeout=600):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if c.info("replication").get("master_link_status") == "up":
            return
        time.sleep(0.01)
    raise RuntimeError("replica never came up")


SYNC_MODES = (
    # name, repl-diskless-sync on the master, repl-diskless-load on the replica
    ("disk", "no", "disabled"),
    ("diskless", "yes", "disabled"),
    ("diskless, load on-empty-db", "yes", "on-empty-db"),
    ("diskless, load swapdb", "yes", "swapdb"),
)


HZ = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """(own, reaped children's) user+system CPU seconds of a process."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ, (int(fields[13]) + int(fields[14])) / HZ


def one_sync(binary, master, load_mode, nkeys):
    """(wall seconds, CPU seconds of master + its RDB child + replica)."""
    r = Server(binary, ["--repl-diskless-load", load_mode])
    try:
        m0, r0 = cpu_seconds(master.proc.pid), cpu_seconds(r.proc.pid)
        t = time.time()
        r.c.replicaof("127.0.0.1", master.port)
        wait_up(r.c)
        took = time.time() - t
        time.sleep(0.5)   # the master reaps its child (its CPU joins the children's count)
        m1, r1 = cpu_seconds(master.proc.pid), cpu_seconds(r.proc.pid)
        assert r.c.dbsize() == nkeys
        return took, (m1[0] - m0[0]) + (m1[1] - m0[1]) + (r1[0] - r0[0])
    finally:
        r.remove()


def full_sync_times(binaries, path, nkeys, runs, modes):
    """{name: {mode: median seconds}}; the two implementations take turns
    run by run, so a change of the machine's load hits both alike."""
    masters = {}
    try:
        for name, b in binaries:
            masters[name] = Server(b)
            load(masters[name], path)
            assert masters[name].c.dbsize() == nkeys, masters[name].c.dbsize()
        times = {name: {m[0]: [] for m in modes} for name, _ in binaries}
        cpu = {name: {m[0]: [] for m in modes} for name, _ in binaries}
        for mode, diskless, load_mode in modes:
            for name, _ in binaries:
                masters[name].c.config_set("repl-diskless-sync", diskless)
            for _ in range(runs):
                for name, b in binaries:
                    wall, used = one_sync(b, masters[name], load_mode, nkeys)
                    times[name][mode].append(wall)
                    cpu[name][mode].append(used)
        for name in times:
            for mode in times[name]:
                print("# %s %s: wall %s, cpu %s" % (name, mode, " ".join("%.2f" % t for t in times[name][mode]),
                                                   " ".join("%.2f" % t for t in cpu[name][mode])), file=sys.stderr)
        med = lambda d: {name: {mode: statistics.median(v) for mode, v in dd.items()} for name, dd in d.items()}
        return med(times), med(cpu)
    finally:
        for m in masters.values():
            m.remove()


def bench_set(port, requests):
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-t", "set", "-n", str(requests), "-c", "50",
                          "-P", "16", "-r", "100000", "-q", "--csv"], capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        if line.startswith('"SET"'):
            return float(line.split(",")[1].strip('"'))
    raise RuntimeError(out.stdout)


def lag_and_throughput(binary, requests, runs):
    m = Server(binary)
    reps = []
    try:
        res = {}
        res["rps0"] = statistics.median(bench_set(m.port, requests) for _ in range(runs))
        for n in (1, 2):
            r = Server(binary)
            r.c.replicaof("127.0.0.1", m.port)
            wait_up(r.c)
            reps.append(r)
            if n == 1:
                lags, catch = [], []
                for _ in range(runs):
                    samples = []
                    stop = threading.Event()

                    def sample():
                        mc = redis.Redis(port=m.port)
                        rc = redis.Redis(port=r.port)
                        while not stop.is_set():
                            mo = mc.info("replication")["master_repl_offset"]
                            ro = rc.info("replication")["slave_repl_offset"]
                            samples.append(max(0, mo - ro))
                            time.sleep(0.05)
                    th = threading.Thread(target=sample)
                    th.start()
                    rps = bench_set(m.port, requests)
                    t = time.time()
                    target = m.c.info("replication")["master_repl_offset"]
                    while r.c.info("replication")["slave_repl_offset"] < target:
                        time.sleep(0.001)
                    catch.append(time.time() - t)
                    stop.set()
                    th.join()
                    lags.append((statistics.median(samples), max(samples), rps))
                res["lag_median"] = statistics.median(x[0] for x in lags)
                res["lag_max"] = statistics.median(x[1] for x in lags)
                res["catchup_ms"] = statistics.median(catch) * 1000
                res["rps1"] = statistics.median(x[2] for x in lags)
            else:
                res["rps2"] = statistics.median(bench_set(m.port, requests) for _ in range(runs))
        return res
    finally:
        for r in reps:
            r.remove()
        m.remove()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=300000)
    ap.add_argument("--sync-only", action="store_true", help="only the full sync figures")
    ap.add_argument("--modes", default="disk,diskless,diskless, load on-empty-db,diskless, load swapdb",
                    help="comma-free names are matched by prefix: disk, diskless, on-empty-db, swapdb")
    a = ap.parse_args()
    wanted = [w.strip() for w in a.modes.replace("diskless, load ", "").split(",")]
    modes = [m for m in SYNC_MODES if m[0] in wanted or m[2] in wanted]
    tmp = tempfile.mkdtemp(prefix="bench-repl-data-")
    path = os.path.join(tmp, "data.resp")
    dataset_file(a.keys, path)
    binaries = (("ours", OURS), ("redis", REDIS))
    try:
        sync, sync_cpu = full_sync_times(binaries, path, a.keys, a.runs, modes)
        load_res = None if a.sync_only else {name: lag_and_throughput(b, a.requests, a.runs) for name, b in binaries}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("| figure | redis-like | Redis 7.0.15 | ours/Redis |")
    print("| --- | ---: | ---: | ---: |")
    for mode, _, _ in modes:
        o, r = sync["ours"][mode], sync["redis"][mode]
        print("| full sync of %d keys, %s (s) | %.2f | %.2f | %.2f |" % (a.keys, mode, o, r, o / r))
    for mode, _, _ in modes:
        o, r = sync_cpu["ours"][mode], sync_cpu["redis"][mode]
        print("| CPU of that sync, master + child + replica, %s (s) | %.2f | %.2f | %.2f |" % (mode, o, r, o / r))
    if load_res is None:
        return
    for key, label in (("lag_median", "lag under SET load, median (bytes)"), ("lag_max", "lag under SET load, max (bytes)"),
                       ("catchup_ms", "catch-up after the load (ms)"), ("rps0", "SET req/s, 0 replicas"),
                       ("rps1", "SET req/s, 1 replica"), ("rps2", "SET req/s, 2 replicas")):
        o, r = load_res["ours"][key], load_res["redis"][key]
        print("| %s | %.0f | %.0f | %s |" % (label, o, r, "%.2f" % (o / r) if r else "-"))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
