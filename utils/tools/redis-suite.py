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
are skipped without --cluster, and so are the two tests that dial the
machine's non-loopback address (loopback only, here).  Each unit's whole
output is kept in WORK/logs/<unit>.log (the reference's in
WORK/redis-logs/) for the failures' details.

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

--cluster runs the cluster tests instead: the cluster units of the main
suite (unit/cluster, unit/cluster-scripting, unit/cluster/*: servers with
cluster-enabled yes) and each file of the tree's tests/cluster harness
(`./runtest-cluster --single NN-name.tcl`, named cluster/NN-name here; it
starts 20 instances of src/redis-server on 127.0.0.1 from port 30000, bus
ports 10000 above).  Every unit runs twice in the same run: in a lane of
ours and in a lane whose src/redis-server is Debian's /usr/bin/redis-server
(--redis-server), one after the other; the table gives both counts per unit
and ends with the total ratio ours/redis of tests passed.  For a harness unit with a failure
the instances' own logs are kept in WORK/logs/<unit>.instances/
(WORK/redis-logs/ for the reference).  --lanes 1 is
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
SKIP = ("cluster", "unit/printver")
# Debian's build of Redis 7.0.15 (TLS included): the reference of --tls and --cluster
REDIS_SERVER = "/usr/bin/redis-server"
TCL_TLS_PACKAGE = "tcl-tls"  # Debian's package of Tcl's tls extension


def all_units(tree, tls):
    text = open(os.path.join(tree, "tests", "test_helper.tcl")).read()
    body = re.search(r"set ::all_tests \{(.*?)\n\}", text, re.S).group(1)
    skip = SKIP if tls else SKIP + ("unit/tls",)
    return [u for u in body.split() if not any(s in u for s in skip)]


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
    for script in ("runtest", "runtest-cluster"):
        shutil.copy(os.path.join(src, script), lane)
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
    if unit.startswith("cluster/"):
        return run_harness_unit(lane, logs, unit, timeout, tls)
    cmd = ["./runtest", "--single", unit, "--ignore-encoding", "--durable", "--clients", "1",
           "--timeout", "120", "--baseport", str(port)]
    if tls:
        cmd.append("--tls")
    for name in NON_LOOPBACK_TESTS:
        cmd += ["--skiptest", name]
    text, note = run_logged(cmd, lane, logs, unit, timeout)
    ok = len(re.findall(r"^\[ok\]:", text, re.M))
    failed = sorted(set(re.findall(r"^\[err\]: (.*?) in tests/", text, re.M)))
    if "[TIMEOUT]" in text:
        note = "a test hung (suite TIMEOUT)"
    if re.search(r"^\[exception\]", text, re.M):
        note = "exception"
    return ok, failed, note


def run_harness_unit(lane, logs, unit, timeout, tls):
    """One file of tests/cluster: its tests print "HH:MM:SS> name: OK" or
    "FAILED: why", and a failure skips the rest of its file."""
    tmp = os.path.join(lane, "tests", "cluster", "tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)  # the harness wants it there
    cmd = ["./runtest-cluster", "--single", "/" + unit.split("/", 1)[1] + ".tcl", "--dont-clean"]
    if tls:
        cmd.append("--tls")
    text, note = run_logged(cmd, lane, logs, unit, timeout)
    ok = len(re.findall(r"^\d\d:\d\d:\d\d> .*: OK$", text, re.M))
    failed = re.findall(r"^\d\d:\d\d:\d\d> (.*?): FAILED", text, re.M)
    if re.search(r"^FAILED: caught an error", text, re.M) or re.search(r"^\[err\]|^Exception", text, re.M):
        note = note or "exception"
        last = re.findall(r"^\d\d:\d\d:\d\d> (.*?): (?!OK$)", text, re.M)
        failed += [t for t in last[-1:] if t not in failed]
    if (failed or note) and os.path.isdir(tmp):  # the instances' logs
        keep = os.path.join(logs, unit.replace("/", "_") + ".instances")
        shutil.rmtree(keep, ignore_errors=True)
        shutil.copytree(tmp, keep, ignore=shutil.ignore_patterns("*.aof", "*.rdb", "appendonlydir"))
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    return ok, failed, note


def run_logged(cmd, lane, logs, unit, timeout):
    """(output, note): CMD in LANE, bounded by TIMEOUT, its output kept in LOGS."""
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
    return text, note


def report(args, servers, units, results):
    totals = {}
    mode = " (TLS mode)" if args.tls else ""
    for name, *_ in servers:
        total_ok = sum(results[name, u][0] for u in units)
        total_failed = sum(len(results[name, u][1]) for u in units)
        totals[name] = total_ok
        print("\n%s%s, %d units: %d tests passed, %d failed; units cut short: %s" % (
            name, mode, len(units), total_ok, total_failed,
            ", ".join(u for u in units if results[name, u][2]) or "none"))
        for unit in units:
            for test in results[name, unit][1]:
                print("  %s: %s" % (unit, test))
    if len(servers) < 2:
        return
    print("\nper unit, passed (failed): ours / redis")
    for unit in units:
        o, r = results["ours", unit], results["redis", unit]
        print("  %-45s %4d (%d) / %4d (%d)%s" % (unit, o[0], len(o[1]), r[0], len(r[1]),
                                               "" if o[0] >= r[0] else "  <"))
    # tests that pass on Redis and fail here: what the ratio is missing
    for unit in units:
        for test in sorted(set(results["ours", unit][1]) - set(results["redis", unit][1])):
            print("  ours only fails %s: %s" % (unit, test))
    print("\n%s%s, %d units: ours passed %d, %s passed %d: %.1f%%" % (
        "cluster tests" if args.cluster else "suite", mode, len(units), totals["ours"], args.redis_server,
        totals["redis"], 100.0 * totals["ours"] / max(1, totals["redis"])))


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
                    help="TLS mode (runtest --tls), against ours and --redis-server")
    ap.add_argument("--cluster", action="store_true",
                    help="the cluster units and tests/cluster, on ours and on --redis-server")
    ap.add_argument("--redis-server", default=REDIS_SERVER,
                    help="the reference of --tls and --cluster (default: Debian's 7.0.15)")
    args = ap.parse_args()
    if not shutil.which("tclsh"):
        sys.exit("tclsh is missing: apt-get install tcl")
    servers = [("ours", os.path.abspath(args.ours),
                os.path.join(ROOT, "src", "redis-like-check-aof"), "lane", "logs")]
    certs = None
    if args.tls:
        ensure_tcl_tls()
        certs = make_certs(args.redis_src, args.work)
    if args.tls or args.cluster:
        if not os.access(args.redis_server, os.X_OK):
            sys.exit("the comparison needs " + args.redis_server + ": apt-get install -y redis-server")
        servers.append(("redis", args.redis_server, "/usr/bin/redis-check-aof", "redis-lane", "redis-logs"))
    if args.units:
        units = args.units.split(",")
    else:
        units = cluster_units(args.redis_src) if args.cluster else all_units(args.redis_src, args.tls)
    # one queue of (unit, server) jobs; each server has --lanes lanes of its own
    lanes = []
    for name, server, check_aof, prefix, logs in servers:
        for i in range(args.lanes):
            lanes.append((name, make_lane(args.redis_src, args.work, "%s%d" % (prefix, i), server, check_aof,
                                          certs), os.path.join(args.work, logs)))
    results, lock, harness = {}, threading.Lock(), threading.Lock()
    todo = {name: list(units) for name, *_ in servers}

    def worker(n):
        name, lane, logs = lanes[n]
        while True:
            with lock:
                if not todo[name]:
                    return
                unit = todo[name].pop(0)
            if "cluster" in unit:
                # one at a time: the harness's ports are fixed, and a cluster
                # unit's bus ports (10000 above) are the next lane's
                with harness:
                    r = run_unit(lane, logs, args.baseport, unit, args.unit_timeout, args.tls)
            else:
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
    report(args, servers, units, results)


if __name__ == "__main__":
    main()
