#!/usr/bin/python3
"""bench-scripting: EVALSHA throughput and server CPU per call, redis-like
against Debian's redis-server 7.0.15 in the same run.

Starts both servers on free loopback ports, SCRIPT LOADs the same scripts
into each, then runs Debian's redis-benchmark with EVALSHA against each
server in turn (alternating, --runs times) and prints the median
requests/s and the server's CPU seconds per million calls (utime+stime
from /proc/PID/stat around each run) with the ratio ours/theirs.
Scripts: a small read (GET of one key) and a 3-command write (INCR,
EXPIRE, GET on a random key among --keyspace).  With --callgrind N, each
server instead runs under valgrind's callgrind (bench-callgrind.py's run):
idle once, then N EVALSHA of each script from 20 clients, and the
user-space instructions per call are printed, a count the load of a shared
machine cannot move.  It prints figures for BENCHMARKS.md; nothing here is
pass/fail.

usage: utils/bench/bench-scripting.py [--runs 5] [--requests 200000] [--clients 50] [--pipeline 1]
                                [--server src/redis-like-server] [--callgrind 20000]
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from importlib import import_module  # noqa: E402

bvr = import_module("bench-vs-redis")
bcg = import_module("bench-callgrind")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPTS = {
    "read (GET)": "return redis.call('GET', KEYS[1])",
    "write (INCR+EXPIRE+GET)": "redis.call('INCR', KEYS[1]) redis.call('EXPIRE', KEYS[1], 1000) "
                               "return redis.call('GET', KEYS[1])",
}


def run_once(pid, port, sha, args):
    before = bvr.cpu_seconds(pid)
    out = subprocess.run(["redis-benchmark", "-p", str(port), "-n", str(args.requests), "-c", str(args.clients),
                          "-P", str(args.pipeline), "-r", str(args.keyspace), "--csv",
                          "EVALSHA", sha, "1", "key:__rand_int__"], capture_output=True, text=True).stdout
    cpu = bvr.cpu_seconds(pid) - before
    rps = None
    for line in out.splitlines():
        cols = [c.strip('"') for c in line.split(",")]
        if len(cols) >= 2 and cols[0].upper().startswith("EVALSHA"):
            rps = float(cols[1])
    return rps, cpu / args.requests * 1e6


def sha_of(body):
    import hashlib
    return hashlib.sha1(body.encode()).hexdigest()


def callgrind_table(args):
    """Instructions per EVALSHA, each server under callgrind: (busy - idle) / N."""
    servers = {"redis-like": args.server, "redis 7.0.15": "/usr/bin/redis-server"}
    per_call = {}
    for name, binary in servers.items():
        idle, _ = bcg.run(binary, [], 0, 20, 1)
        for label, body in SCRIPTS.items():
            load = ["-r", str(args.keyspace), "EVALSHA", sha_of(body), "1", "key:__rand_int__"]
            busy, _ = bcg.run(binary, [], args.callgrind, 20, 1, load=load, setup=[["SCRIPT", "LOAD", body]])
            per_call[(name, label)] = (busy - idle) / args.callgrind
    print("EVALSHA under callgrind: %d calls from 20 clients, user-space instructions per call" % args.callgrind)
    print()
    print("| script | redis-like instr/call | redis 7.0.15 instr/call | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for label in SCRIPTS:
        o, r = per_call[("redis-like", label)], per_call[("redis 7.0.15", label)]
        print("| %s | %s | %s | %.2f |" % (label, f"{o:,.0f}", f"{r:,.0f}", o / r))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--pipeline", type=int, default=1)
    ap.add_argument("--keyspace", type=int, default=1000)
    ap.add_argument("--server", default=os.path.join(ROOT, "src", "redis-like-server"))
    ap.add_argument("--callgrind", type=int, default=0, help="instructions per call under callgrind, N calls")
    args = ap.parse_args()
    if args.callgrind:
        callgrind_table(args)
        return
    servers = {"redis-like": bvr.start(args.server), "redis 7.0.15": bvr.start("/usr/bin/redis-server")}
    try:
        shas = {}
        for name, (proc, port) in servers.items():
            for label, body in SCRIPTS.items():
                shas[label] = bvr.cli(port, "SCRIPT", "LOAD", body).strip()
        results = {(s, label): ([], []) for s in servers for label in SCRIPTS}
        for _ in range(args.runs):
            for label in SCRIPTS:
                for name, (proc, port) in servers.items():
                    rps, cpu = run_once(proc.pid, port, shas[label], args)
                    results[(name, label)][0].append(rps)
                    results[(name, label)][1].append(cpu)
        print("EVALSHA, redis-benchmark -n %d -c %d -P %d -r %d, medians of %d alternating runs"
              % (args.requests, args.clients, args.pipeline, args.keyspace, args.runs))
        print()
        print("| script | redis-like req/s | redis req/s | ratio | redis-like CPU-s/1M | redis CPU-s/1M | ratio |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for label in SCRIPTS:
            o_rps = statistics.median(results[("redis-like", label)][0])
            r_rps = statistics.median(results[("redis 7.0.15", label)][0])
            o_cpu = statistics.median(results[("redis-like", label)][1])
            r_cpu = statistics.median(results[("redis 7.0.15", label)][1])
            print("| %s | %s | %s | %.2f | %.2f | %.2f | %.2f |" % (label, f"{o_rps:,.0f}", f"{r_rps:,.0f}",
                                                                   o_rps / r_rps, o_cpu, r_cpu, o_cpu / r_cpu))
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
