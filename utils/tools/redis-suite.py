#!/usr/bin/python3
"""Run Redis's own test suite (tests/ of a Redis 7.0 source tree, never
copied into ours) against redis-like-server, one unit at a time, and print
a table of what passed and failed per unit.

The suite starts `src/redis-server` of its tree with its own configs, so a
scratch copy of the tree's tests/ gets our binaries under those names
(redis-server, redis-check-aof) beside Debian's redis-cli and
redis-benchmark.  Each unit runs alone (`runtest --single`), with
--ignore-encoding (our encodings differ by design: small sets and lists
are listpacks here, as in Redis 7.2), in LANES copies run side by side on
ports of their own, each unit bounded by --unit-timeout.  Cluster and TLS
units are skipped (not planned here), and so are the two tests that dial the
machine's non-loopback address (loopback only, here).  Each unit's whole output is kept
in WORK/logs/<unit>.log for the failures' details.

    utils/tools/redis-suite.py --redis-src /path/to/redis-7.0.15 [--units unit/type/list,...]
        [--lanes 2] [--work /tmp/rl-redis-suite] [--unit-timeout 900]

Loopback only: the suite binds 127.0.0.1.  Needs tclsh (Debian's tcl)."""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ANSI = re.compile(r"\x1b\[[0-9;]*m")
SKIP = ("cluster", "unit/tls", "unit/printver")


def all_units(tree):
    text = open(os.path.join(tree, "tests", "test_helper.tcl")).read()
    body = re.search(r"set ::all_tests \{(.*?)\n\}", text, re.S).group(1)
    return [u for u in body.split() if not any(s in u for s in SKIP)]


def make_lane(src, work, i):
    """A scratch tree: the suite's files, our binaries as src/redis-*."""
    lane = os.path.join(work, "lane%d" % i)
    shutil.rmtree(lane, ignore_errors=True)
    os.makedirs(os.path.join(lane, "src"))
    shutil.copytree(os.path.join(src, "tests"), os.path.join(lane, "tests"))
    shutil.copy(os.path.join(src, "runtest"), lane)
    links = {"redis-server": os.path.join(ROOT, "src", "redis-like-server"),
             "redis-check-aof": os.path.join(ROOT, "src", "redis-like-check-aof"),
             "redis-cli": shutil.which("redis-cli") or "/usr/bin/redis-cli",
             "redis-benchmark": shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"}
    for name, target in links.items():
        os.symlink(target, os.path.join(lane, "src", name))
    return lane


# Tests that dial this machine's non-loopback address (get_nonloopback_addr):
# never run, as no test of ours leaves loopback.
NON_LOOPBACK_TESTS = ["Protected mode works as expected", "cannot modify protected configuration - local"]


def run_unit(lane, port, unit, timeout):
    """(ok, failed test names, note): one unit in its lane."""
    cmd = ["./runtest", "--single", unit, "--ignore-encoding", "--durable", "--clients", "1",
           "--timeout", "120", "--baseport", str(port)]
    for name in NON_LOOPBACK_TESTS:
        cmd += ["--skiptest", name]
    # Its own process group: the servers a unit started go with it when it
    # is cut short or leaves one behind (the group's id is this run's own).
    p = subprocess.Popen(cmd, cwd=lane, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        note = ""
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        note = "unit timed out"
    try:  # a server the suite left behind (it happens after its TIMEOUT)
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    text = ANSI.sub("", out.decode(errors="replace"))
    # the unit's whole output, for the failures' details
    log = os.path.join(os.path.dirname(lane), "logs", unit.replace("/", "_") + ".log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "w") as f:
        f.write(text)
    ok = len(re.findall(r"^\[ok\]:", text, re.M))
    failed = sorted(set(re.findall(r"^\[err\]: (.*?) in tests/", text, re.M)))
    if "[TIMEOUT]" in text:
        note = "a test hung (suite TIMEOUT)"
    if re.search(r"^\[exception\]", text, re.M):
        note = "exception"
    return ok, failed, note


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--redis-src", required=True, help="a Redis 7.0 source tree (its tests/ and runtest)")
    ap.add_argument("--units", help="comma-separated units (default: all but cluster and TLS)")
    ap.add_argument("--lanes", type=int, default=2)
    ap.add_argument("--work", default="/tmp/rl-redis-suite")
    ap.add_argument("--unit-timeout", type=int, default=900)
    args = ap.parse_args()
    if not shutil.which("tclsh"):
        sys.exit("tclsh is missing: apt-get install tcl")
    units = args.units.split(",") if args.units else all_units(args.redis_src)
    lanes = [make_lane(args.redis_src, args.work, i) for i in range(args.lanes)]
    results, todo, lock = {}, list(units), threading.Lock()

    def worker(i):
        while True:
            with lock:
                if not todo:
                    return
                unit = todo.pop(0)
            results[unit] = run_unit(lanes[i], 21111 + 10000 * i, unit, args.unit_timeout)
            ok, failed, note = results[unit]
            print("%-45s ok %4d  failed %3d  %s" % (unit, ok, len(failed), note), flush=True)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(args.lanes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total_ok = sum(r[0] for r in results.values())
    total_failed = sum(len(r[1]) for r in results.values())
    print("\n%d units: %d tests passed, %d failed; units cut short: %s" % (
        len(results), total_ok, total_failed,
        ", ".join(u for u in units if results[u][2]) or "none"))
    for unit in units:
        for name in results[unit][1]:
            print("  %s: %s" % (unit, name))


if __name__ == "__main__":
    main()
