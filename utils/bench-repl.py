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

Usage: utils/bench-repl.py [--keys 1000000] [--runs 3] [--requests 300000]
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import redis

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
OURS = os.environ.get("RL_SERVER", os.path.join(ROOT, "src", "redis-like-server"))
REDIS = "/usr/bin/redis-server"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary, args=()):
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="bench-repl-")
        cmd = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--dir", self.dir,
               "--appendonly", "no", "--repl-diskless-sync-delay", "0"] + list(args)
        self.log = open(os.path.join(self.dir, "log"), "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, cwd=self.dir)
        self.c = redis.Redis(port=self.port, decode_responses=True, socket_timeout=120)
        for _ in range(200):
            try:
                self.c.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("server did not start: " + binary)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def resp(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


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


def full_sync_times(binary, path, nkeys, runs):
    m = Server(binary)
    try:
        load(m, path)
        assert m.c.dbsize() == nkeys, m.c.dbsize()
        out = {}
        for mode in ("no", "yes"):
            m.c.config_set("repl-diskless-sync", mode)
            times = []
            for _ in range(runs):
                r = Server(binary)
                try:
                    t = time.time()
                    r.c.replicaof("127.0.0.1", m.port)
                    wait_up(r.c)
                    times.append(time.time() - t)
                    assert r.c.dbsize() == nkeys
                finally:
                    r.stop()
            out["disk" if mode == "no" else "diskless"] = statistics.median(times)
        return out
    finally:
        m.stop()


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
            r.stop()
        m.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=300000)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-repl-data-")
    path = os.path.join(tmp, "data.resp")
    dataset_file(a.keys, path)
    try:
        sync = {name: full_sync_times(b, path, a.keys, a.runs) for name, b in (("ours", OURS), ("redis", REDIS))}
        load_res = {name: lag_and_throughput(b, a.requests, a.runs) for name, b in (("ours", OURS), ("redis", REDIS))}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("| figure | redis-like | Redis 7.0.15 | ours/Redis |")
    print("| --- | ---: | ---: | ---: |")
    for mode in ("disk", "diskless"):
        o, r = sync["ours"][mode], sync["redis"][mode]
        print("| full sync of %d keys, %s (s) | %.2f | %.2f | %.2f |" % (a.keys, mode, o, r, o / r))
    for key, label in (("lag_median", "lag under SET load, median (bytes)"), ("lag_max", "lag under SET load, max (bytes)"),
                       ("catchup_ms", "catch-up after the load (ms)"), ("rps0", "SET req/s, 0 replicas"),
                       ("rps1", "SET req/s, 1 replica"), ("rps2", "SET req/s, 2 replicas")):
        o, r = load_res["ours"][key], load_res["redis"][key]
        print("| %s | %.0f | %.0f | %s |" % (label, o, r, "%.2f" % (o / r) if r else "-"))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
