#!/usr/bin/python3
"""bench-streams: streams in redis-like-server against Debian's redis-server.

Both servers run on free loopback ports in the same run; every figure is a
median of --runs runs, alternating server by server.  Measured:
  1. XADD s * f1 <v> f2 <v> f3 <v> with Debian's redis-benchmark (-c 50, no
     pipelining, and -P 16): requests/s and server CPU-s per 1M calls
     (utime+stime from /proc/PID/stat around the run);
  2. consumer throughput: a stream of --entries entries, one group, a
     client doing XREADGROUP COUNT 100 then XACK of those 100 IDs until the
     stream is drained (pipelined pairs): entries/s and server CPU-s per 1M
     entries;
  3. used_memory of a --memory-entries stream of 3-field messages with
     12-digit values (XADD * through redis-benchmark -P 32 -r), minus the
     empty server's, per entry.
It prints Markdown rows for BENCHMARKS.md; it is not a pass/fail test.

usage: utils/bench/bench-streams.py [--runs 3] [--requests 200000] [--entries 200000]
                              [--memory-entries 1000000] [--server src/redis-like-server]
"""
import argparse
import importlib.util
import os
import socket
import statistics
import subprocess
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
spec = importlib.util.spec_from_file_location("bvr", os.path.join(ROOT, "utils", "bench", "bench-vs-redis.py"))
bvr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bvr)

XADD = ["XADD", "s", "*", "f1", "__rand_int__", "f2", "__rand_int__", "f3", "__rand_int__"]


def xadd_run(port, pid, requests, pipeline):
    subprocess.run(["redis-cli", "-p", str(port), "DEL", "s"], capture_output=True)
    cmd = ["redis-benchmark", "-p", str(port), "-q", "--csv", "-n", str(requests), "-c", "50", "-r", "1000000"]
    if pipeline > 1:
        cmd += ["-P", str(pipeline)]
    before = bvr.cpu_seconds(pid)
    t0 = time.time()
    out = subprocess.run(cmd + XADD, capture_output=True, text=True).stdout
    wall = time.time() - t0
    cpu = bvr.cpu_seconds(pid) - before
    rps = None
    for line in out.splitlines():
        parts = [x.strip('"') for x in line.split(",")]
        if len(parts) >= 2 and parts[0] != "test":
            rps = float(parts[1])
    return rps or requests / wall, cpu / requests * 1e6


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.buf = b""

    def send(self, *cmds):
        self.s.sendall(b"".join(bvr.resp(*c) for c in cmds))

    def _line(self):
        while b"\r\n" not in self.buf:
            self.buf += self.s.recv(1 << 20)
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b"+", b"-"):
            return rest
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self.buf += self.s.recv(1 << 20)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        n = int(rest)
        return None if n < 0 else [self.read() for _ in range(n)]


def consume_run(port, pid, entries):
    subprocess.run(["redis-cli", "-p", str(port), "DEL", "q"], capture_output=True)
    bvr.pipe_commands(port, (bvr.resp("XADD", "q", "*", "f1", str(i), "f2", "x" * 10, "f3", "y") for i in range(entries)))
    c = Conn(port)
    c.send(("XGROUP", "CREATE", "q", "g", "0"))
    c.read()
    done = 0
    before = bvr.cpu_seconds(pid)
    t0 = time.time()
    c.send(("XREADGROUP", "GROUP", "g", "c", "COUNT", "100", "STREAMS", "q", ">"))
    while True:
        reply = c.read()
        if not reply:
            break
        ids = [e[0] for e in reply[0][1]]
        done += len(ids)
        c.send(("XACK", "q", "g", *ids), ("XREADGROUP", "GROUP", "g", "c", "COUNT", "100", "STREAMS", "q", ">"))
        assert c.read() == len(ids)
    wall = time.time() - t0
    cpu = bvr.cpu_seconds(pid) - before
    assert done == entries, (done, entries)
    return entries / wall, cpu / entries * 1e6


def memory_run(binary, n):
    p, port = bvr.start(binary)
    try:
        base = bvr.info_field(port, "used_memory")
        subprocess.run(["redis-benchmark", "-p", str(port), "-q", "-n", str(n), "-c", "4", "-P", "32", "-r", "1000000"]
                       + XADD, capture_output=True)
        length = int(bvr.cli(port, "XLEN", "s").strip())
        time.sleep(0.5)
        used = bvr.info_field(port, "used_memory")
        return (used - base) / length, length
    finally:
        p.terminate()
        p.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--entries", type=int, default=200000)
    ap.add_argument("--memory-entries", type=int, default=1000000)
    ap.add_argument("--server", default=os.path.join(ROOT, "src", "redis-like-server"))
    a = ap.parse_args()
    names = ("redis-like", "redis 7.0.15")
    binaries = (a.server, "/usr/bin/redis-server")
    procs = [bvr.start(b) for b in binaries]
    res = {n: {"xadd": [], "xaddcpu": [], "xaddP": [], "xaddPcpu": [], "cons": [], "conscpu": []} for n in names}
    try:
        for _ in range(a.runs):
            for n, (p, port) in zip(names, procs):
                r, c = xadd_run(port, p.pid, a.requests, 1)
                res[n]["xadd"].append(r)
                res[n]["xaddcpu"].append(c)
                r, c = xadd_run(port, p.pid, a.requests, 16)
                res[n]["xaddP"].append(r)
                res[n]["xaddPcpu"].append(c)
                r, c = consume_run(port, p.pid, a.entries)
                res[n]["cons"].append(r)
                res[n]["conscpu"].append(c)
    finally:
        bvr.benchlib.stop_all([p for p, _ in procs])
    med = {n: {k: statistics.median(v) for k, v in d.items()} for n, d in res.items()}
    rows = [("XADD calls/s (-c 50)", "xadd", "{:,.0f}"), ("server CPU-s per 1M XADD", "xaddcpu", "{:.2f}"),
            ("XADD calls/s (-c 50 -P 16)", "xaddP", "{:,.0f}"), ("server CPU-s per 1M XADD (-P 16)", "xaddPcpu", "{:.2f}"),
            ("XREADGROUP+XACK entries/s", "cons", "{:,.0f}"), ("server CPU-s per 1M consumed entries", "conscpu", "{:.2f}")]
    print("medians of %d runs\n" % a.runs)
    print("| figure | redis-like | redis 7.0.15 | ratio |\n| --- | ---: | ---: | ---: |")
    for label, k, fmt in rows:
        x, y = med[names[0]][k], med[names[1]][k]
        print("| %s | %s | %s | %.2f |" % (label, fmt.format(x), fmt.format(y), x / y))
    mem = [memory_run(b, a.memory_entries) for b in binaries]
    print("\n| used_memory per entry (%d entries, 3 fields) | %.1f B | %.1f B | %.2f |"
          % (mem[0][1], mem[0][0], mem[1][0], mem[0][0] / mem[1][0]))


if __name__ == "__main__":
    main()
