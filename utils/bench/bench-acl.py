#!/usr/bin/python3
"""bench-acl: what ACL checks cost.  redis-benchmark SET/GET throughput and
server CPU per request for a restricted user (one key pattern, a few
categories) against the unrestricted default user, on redis-like and, as
the peer measured in the same run, Debian's redis-server 7.0.15.

Both servers start on free loopback ports with the same user:
  ACL SETUSER bench on >benchpw resetkeys ~key:* -@all +@read +@write +@connection -@dangerous
redis-benchmark then runs -t set,get as "default" and as "bench" (--user
bench -a benchpw), alternating users and servers run by run, --runs
times.  Printed: median req/s per test and user, the restricted/default
ratio per server, and server CPU-seconds per million requests (utime+stime
from /proc/PID/stat around each run) with the same ratio.  Nothing here is
pass/fail; the figures go to BENCHMARKS.md.

With --callgrind N, it instead counts user-space instructions per request,
which the load of a shared machine cannot disturb: each server runs under
valgrind --tool=callgrind once with no requests and once per user with
N SET + N GET requests; (total - idle) / 2N is the cost of a request.

usage: utils/bench/bench-acl.py [--runs 5] [--requests 200000] [--clients 50] [--pipeline 1]
                          [--server src/redis-like-server] [--callgrind 20000]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from importlib import import_module  # noqa: E402

bvr = import_module("bench-vs-redis")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RULES = ["on", ">benchpw", "resetkeys", "~key:*", "-@all", "+@read", "+@write", "+@connection", "-@dangerous"]
USERS = {"default": [], "restricted": ["--user", "bench", "-a", "benchpw"]}


def run_once(pid, port, auth, args):
    cmd = ["redis-benchmark", "-p", str(port), "-n", str(args.requests), "-c", str(args.clients),
           "-P", str(args.pipeline), "-r", "100000", "-t", "set,get", "--csv"] + auth
    before = bvr.cpu_seconds(pid)
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    cpu = bvr.cpu_seconds(pid) - before
    rps = {}
    for line in out.splitlines():
        cols = [c.strip('"') for c in line.split(",")]
        if len(cols) >= 2 and cols[0] in ("SET", "GET"):
            rps[cols[0]] = float(cols[1])
    if len(rps) != 2:
        raise RuntimeError("redis-benchmark failed: " + out)
    return rps, cpu / (2 * args.requests) * 1e6


def callgrind_total(binary, auth, requests, clients):
    """Instructions the server executes for `requests` SET + GET (0 = none)."""
    out_dir = tempfile.mkdtemp(prefix="bench-acl-cg-")
    out = os.path.join(out_dir, "cg.out")
    port = bvr.free_port()
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, binary, "--port", str(port),
           "--bind", "127.0.0.1", "--save", "", "--dir", out_dir]
    if binary.endswith("redis-server"):
        cmd += ["--appendonly", "no"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and bvr.cli(port, "PING").strip() != "PONG":
        time.sleep(0.2)
    assert bvr.cli(port, "ACL", "SETUSER", "bench", *RULES).strip() == "OK"
    if requests:
        subprocess.run(["redis-benchmark", "-p", str(port), "-n", str(requests), "-c", str(clients), "-r", "100000",
                        "-t", "set,get", "-q"] + auth, capture_output=True, check=True)
    bvr.cli(port, "SHUTDOWN", "NOSAVE")
    p.wait(120)
    with open(out) as f:
        for line in f:
            m = re.match(r"(summary|totals): (\d+)", line)
            if m:
                return int(m.group(2))
    raise RuntimeError("no callgrind totals in " + out)


def callgrind_main(args):
    binaries = {"redis-like": args.server, "redis 7.0.15": "/usr/bin/redis-server"}
    n = args.callgrind
    print("callgrind instructions per request, %d SET + %d GET from %d clients, minus an idle run" % (n, n, args.clients))
    print()
    print("| server | default instr/req | restricted instr/req | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for name, binary in binaries.items():
        idle = callgrind_total(binary, [], 0, args.clients)
        per = {u: (callgrind_total(binary, auth, n, args.clients) - idle) / (2 * n) for u, auth in USERS.items()}
        print("| %s | %s | %s | %.3f |" % (name, f"{per['default']:,.0f}", f"{per['restricted']:,.0f}",
                                          per["restricted"] / per["default"]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--pipeline", type=int, default=1)
    ap.add_argument("--server", default=os.path.join(ROOT, "src", "redis-like-server"))
    ap.add_argument("--callgrind", type=int, default=0)
    args = ap.parse_args()
    if args.callgrind:
        callgrind_main(args)
        return
    servers = {"redis-like": bvr.start(args.server), "redis 7.0.15": bvr.start("/usr/bin/redis-server")}
    try:
        for proc, port in servers.values():
            out = bvr.cli(port, "ACL", "SETUSER", "bench", *RULES).strip()
            assert out == "OK", out
        res = {(s, u): {"SET": [], "GET": [], "cpu": []} for s in servers for u in USERS}
        for _ in range(args.runs):
            for name, (proc, port) in servers.items():
                for user, auth in USERS.items():
                    rps, cpu = run_once(proc.pid, port, auth, args)
                    r = res[(name, user)]
                    r["SET"].append(rps["SET"])
                    r["GET"].append(rps["GET"])
                    r["cpu"].append(cpu)
        print("redis-benchmark -t set,get -n %d -c %d -P %d -r 100000, medians of %d alternating runs"
              % (args.requests, args.clients, args.pipeline, args.runs))
        print()
        print("| server | test | default req/s | restricted req/s | ratio |")
        print("| --- | --- | ---: | ---: | ---: |")
        for name in servers:
            for test in ("SET", "GET"):
                d = statistics.median(res[(name, "default")][test])
                r = statistics.median(res[(name, "restricted")][test])
                print("| %s | %s | %s | %s | %.3f |" % (name, test, f"{d:,.0f}", f"{r:,.0f}", r / d))
        print()
        print("| server | default CPU-s/1M req | restricted CPU-s/1M req | ratio |")
        print("| --- | ---: | ---: | ---: |")
        for name in servers:
            d = statistics.median(res[(name, "default")]["cpu"])
            r = statistics.median(res[(name, "restricted")]["cpu"])
            print("| %s | %.2f | %.2f | %.3f |" % (name, d, r, r / d))
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
