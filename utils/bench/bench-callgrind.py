#!/usr/bin/python3
"""bench-callgrind: user-space instructions per SET/GET request, ours and
Redis 7.0.15's, counted by valgrind's callgrind (deterministic, so the
load of a shared machine cannot move it; CPU time per request is
bench-io-engine.py's job).

Each server runs under callgrind twice: once idle (started, then shut
down) and once serving redis-benchmark -c CLIENTS -P PIPELINE -n N -t
set,get.  (busy - idle) / 2N is the user-space cost of one request: the
parser, dispatch, the command, reply building and the engine's own loop
bookkeeping; the kernel's share is not counted.  With --top K the busy
run's K most expensive functions (inclusive of nothing: self cost) are
printed per server, from callgrind_annotate.

A server given as LABEL=BINARY[,ARG...] runs with the ARGs (e.g. an
older build: `--server "base=/tmp/old-server"`); the default set is our
src/redis-like-server on its default engine and /usr/bin/redis-server.

usage: utils/bench/bench-callgrind.py [--requests 20000] [--pipeline 16]
                                [--clients 50] [--top 25]
                                [--server LABEL=BINARY[,ARG...] ...]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def run(binary, extra, requests, clients, pipeline, load=("-t", "set,get"), setup=()):
    """(total instructions, callgrind output file) of one run: setup's
    commands (argument lists) sent first, then redis-benchmark with the
    load's arguments (SET and GET by default)."""
    out_dir = tempfile.mkdtemp(prefix="bench-cg-")
    out = os.path.join(out_dir, "cg.out")
    port = benchlib.free_port()
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out]
    cmd += benchlib.server_command(binary, port, out_dir, extra)
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not benchlib.pong_once(port):
            time.sleep(0.2)
        for command in setup:
            subprocess.run(["redis-cli", "-p", str(port)] + list(command), capture_output=True, check=True)
        if requests:
            bench = ["redis-benchmark", "-p", str(port), "-n", str(requests), "-c", str(clients), "-P",
                     str(pipeline), "-q"] + list(load)
            subprocess.run(bench, capture_output=True, check=True, timeout=600)
        with benchlib.socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(benchlib.resp("SHUTDOWN", "NOSAVE"))
            try:
                s.recv(64)
            except OSError:
                pass
        p.wait(120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    with open(out) as f:
        for line in f:
            m = re.match(r"(summary|totals): (\d+)", line)
            if m:
                return int(m.group(2)), out
    raise RuntimeError("no callgrind totals in " + out)


def top_functions(out, k):
    """The k functions with the most self instructions, as text lines."""
    text = subprocess.run(["callgrind_annotate", "--threshold=100", out], capture_output=True, text=True).stdout
    rows = []
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*([\d.]+)%\)\s+(\S.*)", line)
        if m:
            rows.append("%12s %6s%%  %s" % (m.group(1), m.group(2), m.group(3)[:100]))
    return rows[:k]


def parse_server(spec):
    label, _, rest = spec.partition("=")
    parts = rest.split(",")
    return label, parts[0], parts[1:]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--pipeline", type=int, default=16)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--top", type=int, default=0)
    ap.add_argument("--server", action="append", default=[])
    args = ap.parse_args()
    servers = [parse_server(s) for s in args.server] or [("redis-like", benchlib.OURS, []),
                                                         ("redis 7.0.15", benchlib.REDIS, [])]
    print("callgrind instructions per request: %d SET + %d GET, -c %d -P %d, minus an idle run" %
          (args.requests, args.requests, args.clients, args.pipeline))
    results = []
    for label, binary, extra in servers:
        idle, _ = run(binary, extra, 0, args.clients, args.pipeline)
        busy, out = run(binary, extra, args.requests, args.clients, args.pipeline)
        per = (busy - idle) / (2 * args.requests)
        results.append((label, per, out))
        print("%-24s %10.0f instr/req" % (label, per), flush=True)
    if len(results) > 1:
        ref = results[-1][1]
        for label, per, _ in results[:-1]:
            print("%-24s ratio to %s: %.3f" % (label, results[-1][0], per / ref))
    for label, per, out in results:
        if args.top:
            print("\n%s: top functions of the busy run (self instructions)" % label)
            print("\n".join(top_functions(out, args.top)))


if __name__ == "__main__":
    main()
