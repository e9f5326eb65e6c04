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
units are skipped without --cluster (TLS is not planned here), and so are
the two tests that dial the machine's non-loopback address (loopback only,
here).  Each unit's whole output is kept in WORK/logs/<unit>.log for the
failures' details.

    utils/tools/redis-suite.py --redis-src /path/to/redis-7.0.15 [--units unit/type/list,...]
        [--lanes 2] [--work /tmp/rl-redis-suite] [--unit-timeout 900]

--cluster runs the cluster tests instead: the cluster units of the main
suite (unit/cluster, unit/cluster-scripting, unit/cluster/*: servers with
cluster-enabled yes) and each file of the tree's tests/cluster harness
(`./runtest-cluster --single NN-name.tcl`, named cluster/NN-name here; it
starts 20 instances of src/redis-server on 127.0.0.1 from port 30000, bus
ports 10000 above).  Every unit runs twice in the same run: in a lane of
ours and in a lane whose src/redis-server is Debian's /usr/bin/redis-server
(--redis-server), one after the other; the table gives both counts per unit
and ends with the total ratio ours/redis of tests passed.  Logs go to
WORK/logs/<unit>.<ours|redis>.log, and for a harness unit with a failure the
instances' own logs to WORK/logs/<unit>.<side>.instances/.  --lanes 1 is
advised on a small machine (a harness unit's 20 instances are heavy);
harness units never run two at a time (their ports are fixed).

    utils/tools/redis-suite.py --redis-src /path/to/redis-7.0.15 --cluster --lanes 1
        [--units cluster/04-resharding,unit/cluster/misc,...] [--unit-timeout 600]
        [--redis-server /usr/bin/redis-server] [--ours build/redis-like-server copy]

Loopback only: the suite and the harness bind 127.0.0.1.  Needs tclsh
(Debian's tcl)."""
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


def cluster_units(tree):
    """The main suite's cluster units, then the harness's files."""
    tests = os.path.join(tree, "tests")
    units = sorted("unit/" + f[:-4] for f in os.listdir(os.path.join(tests, "unit"))
                   if f.startswith("cluster") and f.endswith(".tcl"))
    units += sorted("unit/cluster/" + f[:-4] for f in os.listdir(os.path.join(tests, "unit", "cluster"))
                    if f.endswith(".tcl"))
    units += sorted("cluster/" + f[:-4] for f in os.listdir(os.path.join(tests, "cluster", "tests"))
                    if f.endswith(".tcl"))
    return units


def make_lane(src, work, name, server):
    """A scratch tree: the suite's files, SERVER as src/redis-server."""
    lane = os.path.join(work, name)
    shutil.rmtree(lane, ignore_errors=True)
    os.makedirs(os.path.join(lane, "src"))
    shutil.copytree(os.path.join(src, "tests"), os.path.join(lane, "tests"))
    for script in ("runtest", "runtest-cluster"):
        shutil.copy(os.path.join(src, script), lane)
    links = {"redis-server": server,
             "redis-check-aof": os.path.join(ROOT, "src", "redis-like-check-aof"),
             "redis-cli": shutil.which("redis-cli") or "/usr/bin/redis-cli",
             "redis-benchmark": shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"}
    for name, target in links.items():
        os.symlink(target, os.path.join(lane, "src", name))
    return lane


# Tests that dial this machine's non-loopback address (get_nonloopback_addr):
# never run, as no test of ours leaves loopback.
NON_LOOPBACK_TESTS = ["Protected mode works as expected", "cannot modify protected configuration - local"]


def run_unit(lane, port, unit, timeout, tag=""):
    """(ok, failed test names, note): one unit in its lane."""
    if unit.startswith("cluster/"):
        return run_harness_unit(lane, unit, timeout, tag)
    cmd = ["./runtest", "--single", unit, "--ignore-encoding", "--durable", "--clients", "1",
           "--timeout", "120", "--baseport", str(port)]
    for name in NON_LOOPBACK_TESTS:
        cmd += ["--skiptest", name]
    text, note = run_logged(cmd, lane, unit, timeout, tag)
    ok = len(re.findall(r"^\[ok\]:", text, re.M))
    failed = sorted(set(re.findall(r"^\[err\]: (.*?) in tests/", text, re.M)))
    if "[TIMEOUT]" in text:
        note = "a test hung (suite TIMEOUT)"
    if re.search(r"^\[exception\]", text, re.M):
        note = "exception"
    return ok, failed, note


def run_harness_unit(lane, unit, timeout, tag):
    """One file of tests/cluster: its tests print "HH:MM:SS> name: OK" or
    "FAILED: why", and a failure skips the rest of its file."""
    tmp = os.path.join(lane, "tests", "cluster", "tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)  # the harness wants it there
    cmd = ["./runtest-cluster", "--single", "/" + unit.split("/", 1)[1] + ".tcl", "--dont-clean"]
    text, note = run_logged(cmd, lane, unit, timeout, tag)
    ok = len(re.findall(r"^\d\d:\d\d:\d\d> .*: OK$", text, re.M))
    failed = re.findall(r"^\d\d:\d\d:\d\d> (.*?): FAILED", text, re.M)
    if re.search(r"^FAILED: caught an error", text, re.M) or re.search(r"^\[err\]|^Exception", text, re.M):
        note = note or "exception"
        last = re.findall(r"^\d\d:\d\d:\d\d> (.*?): (?!OK$)", text, re.M)
        failed += [t for t in last[-1:] if t not in failed]
    if (failed or note) and os.path.isdir(tmp):  # the instances' logs
        keep = os.path.join(os.path.dirname(lane), "logs", unit.replace("/", "_") + tag + ".instances")
        shutil.rmtree(keep, ignore_errors=True)
        shutil.copytree(tmp, keep, ignore=shutil.ignore_patterns("*.aof", "*.rdb", "appendonlydir"))
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    return ok, failed, note


def run_logged(cmd, lane, unit, timeout, tag):
    """(output, note): CMD in LANE, bounded by TIMEOUT, its output kept."""
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
    log = os.path.join(os.path.dirname(lane), "logs", unit.replace("/", "_") + tag + ".log")
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "w") as f:
        f.write(text)
    return text, note


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--redis-src", required=True, help="a Redis 7.0 source tree (its tests/ and runtest)")
    ap.add_argument("--units", help="comma-separated units (default: all but cluster and TLS)")
    ap.add_argument("--lanes", type=int, default=2)
    ap.add_argument("--work", default="/tmp/rl-redis-suite")
    ap.add_argument("--unit-timeout", type=int, default=900)
    ap.add_argument("--cluster", action="store_true",
                    help="the cluster units and tests/cluster, on ours and on --redis-server")
    ap.add_argument("--redis-server", default="/usr/bin/redis-server",
                    help="the Redis binary of --cluster's second lane")
    ap.add_argument("--ours", default=os.path.join(ROOT, "src", "redis-like-server"),
                    help="our server binary (default: this tree's build)")
    args = ap.parse_args()
    if not shutil.which("tclsh"):
        sys.exit("tclsh is missing: apt-get install tcl")
    if args.units:
        units = args.units.split(",")
    else:
        units = cluster_units(args.redis_src) if args.cluster else all_units(args.redis_src)
    ours = os.path.abspath(args.ours)
    # each worker's lanes: ours, then (--cluster) Redis's on the same ports
    sides = [("ours", ours)] + ([("redis", args.redis_server)] if args.cluster else [])
    lanes = [[make_lane(args.redis_src, args.work, "lane%d%s" % (i, "-" + side if args.cluster else ""), server)
              for side, server in sides] for i in range(args.lanes)]
    results, todo, lock, harness = {}, list(units), threading.Lock(), threading.Lock()

    def worker(i):
        while True:
            with lock:
                if not todo:
                    return
                unit = todo.pop(0)
            row = []
            for (side, _), lane in zip(sides, lanes[i]):
                tag = "." + side if args.cluster else ""
                if unit.startswith("cluster/"):  # fixed ports: one at a time
                    with harness:
                        row.append(run_unit(lane, 0, unit, args.unit_timeout, tag))
                else:
                    row.append(run_unit(lane, 21111 + 10000 * i, unit, args.unit_timeout, tag))
            results[unit] = row
            print("%-40s " % unit + "   ".join("%s ok %4d failed %3d %s" % (
                side if args.cluster else "", ok, len(failed), note)
                for (side, _), (ok, failed, note) in zip(sides, row)), flush=True)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(args.lanes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    totals = []
    for k, (side, _) in enumerate(sides):
        total_ok = sum(results[u][k][0] for u in units)
        total_failed = sum(len(results[u][k][1]) for u in units)
        totals.append(total_ok)
        print("\n%s%d units: %d tests passed, %d failed; units cut short: %s" % (
            side + ": " if args.cluster else "", len(results), total_ok, total_failed,
            ", ".join(u for u in units if results[u][k][2]) or "none"))
        for unit in units:
            for name in results[unit][k][1]:
                print("  %s: %s" % (unit, name))
    if args.cluster:
        print("\nours/redis: %d/%d tests passed = %.1f%%" % (
            totals[0], totals[1], 100.0 * totals[0] / max(totals[1], 1)))


if __name__ == "__main__":
    main()
