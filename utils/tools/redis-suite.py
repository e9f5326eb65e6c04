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
ports of their own, each unit bounded by --unit-timeout.  Cluster units
are skipped (not planned here), and so are the two tests that dial the
machine's non-loopback address (loopback only, here).  Each unit's whole output is kept
in WORK/logs/<unit>.log for the failures' details.

With --tls the suite runs in TLS mode (`runtest --tls`, unit/tls included):
the certificates come from the tree's utils/gen-test-certs.sh, made once
into WORK/tls and copied into every lane, and each unit runs twice in the
same run, against ours and against Debian's /usr/bin/redis-server (7.0.15,
built with TLS) in lanes of its own (WORK/redis-lane*, logs in
WORK/redis-logs), so the table shows both servers' counts and the total
ratio of ours to Redis's.  TLS mode needs Tcl's tls package (Debian's
tcl-tls): installed with apt-get when run as root, else named.

    utils/tools/redis-suite.py --redis-src /path/to/redis-7.0.15 [--units unit/type/list,...]
        [--lanes 2] [--work /tmp/rl-redis-suite] [--unit-timeout 900] [--tls] [--ours BINARY]

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
SKIP = ("cluster", "unit/printver")
# Debian's build of Redis 7.0.15 (TLS included): the reference of --tls runs
REDIS_SERVER = "/usr/bin/redis-server"
TCL_TLS_PACKAGE = "tcl-tls"  # Debian's package of Tcl's tls extension


def all_units(tree, tls):
    text = open(os.path.join(tree, "tests", "test_helper.tcl")).read()
    body = re.search(r"set ::all_tests \{(.*?)\n\}", text, re.S).group(1)
    skip = SKIP if tls else SKIP + ("unit/tls",)
    return [u for u in body.split() if not any(s in u for s in skip)]


def tcl_has_tls():
    p = subprocess.run(["tclsh"], input=b"if {[catch {package require tls}]} {exit 1}\n",
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return p.returncode == 0


def ensure_tcl_tls():
    """Tcl's tls package, which `runtest --tls` loads: as utils/install-deps.sh
    does, apt-get installs it when run as root, else the user is told."""
    if tcl_has_tls():
        return
    if os.geteuid() != 0:
        sys.exit("--tls needs Tcl's tls package; run as root: apt-get install -y " + TCL_TLS_PACKAGE)
    print("redis-suite: installing " + TCL_TLS_PACKAGE, file=sys.stderr)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], env=env, stdout=sys.stderr)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", TCL_TLS_PACKAGE],
                   env=env, stdout=sys.stderr, check=True)
    if not tcl_has_tls():
        sys.exit("Tcl still finds no tls package after installing " + TCL_TLS_PACKAGE)


def make_certs(src, work):
    """The suite's certificates (tests/tls/*), made by the tree's own
    utils/gen-test-certs.sh in a scratch directory of WORK."""
    where = os.path.join(work, "tls")
    shutil.rmtree(where, ignore_errors=True)
    os.makedirs(where)
    subprocess.run(["bash", os.path.join(os.path.abspath(src), "utils", "gen-test-certs.sh")],
                   cwd=where, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return os.path.join(where, "tests", "tls")


def make_lane(src, work, name, server, check_aof, certs):
    """A scratch tree: the suite's files, SERVER and CHECK_AOF as
    src/redis-server and src/redis-check-aof, the certificates if any."""
    lane = os.path.join(work, name)
    shutil.rmtree(lane, ignore_errors=True)
    os.makedirs(os.path.join(lane, "src"))
    shutil.copytree(os.path.join(src, "tests"), os.path.join(lane, "tests"))
    shutil.copy(os.path.join(src, "runtest"), lane)
    if certs:
        shutil.copytree(certs, os.path.join(lane, "tests", "tls"))
    links = {"redis-server": server,
             "redis-check-aof": check_aof,
             "redis-cli": shutil.which("redis-cli") or "/usr/bin/redis-cli",
             "redis-benchmark": shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"}
    for name, target in links.items():
        os.symlink(target, os.path.join(lane, "src", name))
    return lane


# Tests that dial this machine's non-loopback address (get_nonloopback_addr):
# never run, as no test of ours leaves loopback.
NON_LOOPBACK_TESTS = ["Protected mode works as expected", "cannot modify protected configuration - local"]


def run_unit(lane, logs, port, unit, timeout, tls):
    """(ok, failed test names, note): one unit in its lane."""
    cmd = ["./runtest", "--single", unit, "--ignore-encoding", "--durable", "--clients", "1",
           "--timeout", "120", "--baseport", str(port)]
    if tls:
        cmd.append("--tls")
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
    log = os.path.join(logs, unit.replace("/", "_") + ".log")
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
    ap.add_argument("--units", help="comma-separated units (default: all but cluster, and TLS without --tls)")
    ap.add_argument("--lanes", type=int, default=2, help="lanes per server")
    ap.add_argument("--work", default="/tmp/rl-redis-suite")
    ap.add_argument("--unit-timeout", type=int, default=900)
    ap.add_argument("--baseport", type=int, default=21111, help="the first lane's ports; +10000 a lane")
    ap.add_argument("--ours", default=os.path.join(ROOT, "src", "redis-like-server"),
                    help="the server under test (default: this tree's src/redis-like-server); a copy "
                         "lets a long run go on while the tree rebuilds")
    ap.add_argument("--tls", action="store_true",
                    help="TLS mode (runtest --tls), against ours and Redis's " + REDIS_SERVER)
    args = ap.parse_args()
    if not shutil.which("tclsh"):
        sys.exit("tclsh is missing: apt-get install tcl")
    servers = [("ours", os.path.abspath(args.ours),
                os.path.join(ROOT, "src", "redis-like-check-aof"), "lane", "logs")]
    certs = None
    if args.tls:
        ensure_tcl_tls()
        if not os.access(REDIS_SERVER, os.X_OK):
            sys.exit("--tls compares with " + REDIS_SERVER + ": apt-get install -y redis-server")
        certs = make_certs(args.redis_src, args.work)
        servers.append(("redis", REDIS_SERVER, "/usr/bin/redis-check-aof", "redis-lane", "redis-logs"))
    units = args.units.split(",") if args.units else all_units(args.redis_src, args.tls)
    # one queue of (unit, server) jobs; each server has --lanes lanes of its own
    lanes = []
    for name, server, check_aof, prefix, logs in servers:
        for i in range(args.lanes):
            lanes.append((name, make_lane(args.redis_src, args.work, "%s%d" % (prefix, i), server, check_aof,
                                          certs), os.path.join(args.work, logs)))
    results, lock = {}, threading.Lock()
    todo = {name: list(units) for name, *_ in servers}

    def worker(n):
        name, lane, logs = lanes[n]
        while True:
            with lock:
                if not todo[name]:
                    return
                unit = todo[name].pop(0)
            r = run_unit(lane, logs, args.baseport + 10000 * n, unit, args.unit_timeout, args.tls)
            with lock:
                results[name, unit] = r
                ok, failed, note = r
                print("%-45s %-5s ok %4d  failed %3d  %s" % (unit, name, ok, len(failed), note), flush=True)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(len(lanes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    totals = {}
    for name, *_ in servers:
        total_ok = sum(results[name, u][0] for u in units)
        total_failed = sum(len(results[name, u][1]) for u in units)
        totals[name] = total_ok
        print("\n%s%s, %d units: %d tests passed, %d failed; units cut short: %s" % (
            name, " (TLS mode)" if args.tls else "", len(units), total_ok, total_failed,
            ", ".join(u for u in units if results[name, u][2]) or "none"))
        for unit in units:
            for test in results[name, unit][1]:
                print("  %s: %s" % (unit, test))
    if args.tls:
        print("\nper unit, passed (failed): ours / redis")
        for unit in units:
            o, r = results["ours", unit], results["redis", unit]
            print("  %-45s %4d (%d) / %4d (%d)%s" % (unit, o[0], len(o[1]), r[0], len(r[1]),
                                                   "" if o[0] >= r[0] else "  <"))
        # tests that pass on Redis and fail here: what the ratio is missing
        for unit in units:
            for test in sorted(set(results["ours", unit][1]) - set(results["redis", unit][1])):
                print("  ours only fails %s: %s" % (unit, test))
        print("\nTLS mode, %d units: ours passed %d, redis-server %s passed %d: %.1f%%" % (
            len(units), totals["ours"], REDIS_SERVER, totals["redis"],
            100.0 * totals["ours"] / max(1, totals["redis"])))


if __name__ == "__main__":
    main()
