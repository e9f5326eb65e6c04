#!/usr/bin/python3
"""Run ioredis' functional test suite (mocha, test/functional/**) against
our server and then against Redis 7.4.1, and print both pass counts and
the tests that pass on one only (issue 47; the counts are in
docs/compatibility.md, "Test suites").

    utils/tools/ioredis-suite.py --src /path/to/ioredis-5.11.1
        [--ref /work/ref/redis-7.4/src/redis-server] [--work /tmp/rl-ioredis]
        [--only ours|redis] [--grep TEXT]

--src is an ioredis source tree of the version to test (nothing of it is
copied into ours) with its dev dependencies installed, e.g.
    git -C ioredis archive v5.11.1 lib test bin package.json package-lock.json \\
        tsconfig.json | tar -x -C DIR && (cd DIR && npm ci --ignore-scripts)
(the npm tarball has no tests).  --ref defaults to what
utils/dev/redis74-ref.sh builds.

The suite talks to localhost:6379 (ioredis' default port, which several
tests assert) and starts mock servers on fixed ports (17379, 30001...,
26379).  So each server, and mocha, run in a network namespace of their
own (`unshare -rn`, which needs unprivileged user namespaces) holding
nothing but `lo`: the ports are free there whatever runs on the machine,
and nothing can be dialled but loopback.  No test is skipped: the files
naming other hosts dial loopback only (cluster/nat.ts's 192.168.1.x
addresses are rewritten by natMap to 127.0.0.1, cluster/dnsLookup.ts's and
cluster/resolveSrv.ts's a.com is resolved by the tests' own functions).
Tests that need a newer server than 7.4 skip themselves ("pending").

--cluster also runs test/cluster (ioredis' `test:cluster`), which wants a
cluster of 3 masters on 3000..3002 with a replica each on 3003..3005:
utils/tools/cluster-up makes one of each server there (bus ports +10000)
and stops it by pid.
Exit status 1 when a test passes on Redis and not on ours."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "utils", "bench"))
import benchlib  # noqa: E402
from suitelib import print_one_side_only  # noqa: E402

REF74 = "/work/ref/redis-7.4/src/redis-server"
PORT = 6379
CLUSTER_BASE = 3000  # test/cluster's masters 3000..3002, replicas 3003..3005


def node_major():
    out = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    return tuple(int(x) for x in out.lstrip("v").split(".")[:2])


def cluster_up(args, name, binary, action):
    env = dict(os.environ, CLUSTER_DIR=os.path.join(args.work, name), CL_BASE_PORT=str(CLUSTER_BASE),
               RL_SERVER=binary)
    cmd = [os.path.join(ROOT, "utils", "tools", "cluster-up"), action] + (["3", "1"] if action == "cluster" else [])
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def replicas_attached(port, want=3, timeout=30.0):
    """Wait until CLUSTER NODES on port lists want replicas."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        out = subprocess.run(["redis-cli", "-p", str(port), "cluster", "nodes"], capture_output=True, text=True,
                             timeout=10).stdout
        if sum(1 for line in out.splitlines() if " slave " in line) >= want:
            return True
        time.sleep(0.5)
    return False


def run_engine(args, engine, binary, part="functional"):
    """The suite's outcome per test title: passed, failed, pending.
    part "functional": test/functional on one server at 6379;
    "cluster": test/cluster on 3 masters + 3 replicas at 3000..3005."""
    name = engine if part == "functional" else engine + "-cluster"
    wd = os.path.join(args.work, name)
    shutil.rmtree(wd, ignore_errors=True)
    os.makedirs(wd)
    report = os.path.join(args.work, name + ".json")
    if os.path.exists(report):
        os.remove(report)
    # mocha's settings (ts-node, timeout, --exit) come from the package.json.
    cmd = [os.path.join(args.src, "node_modules", ".bin", "mocha")]
    if node_major() >= (22, 6):
        cmd.append("--no-experimental-strip-types")
    # test:js's globs (its helpers flush 6379 after each test), or test:cluster's.
    cmd += ["test/helpers/*.ts", "test/functional/**/*.ts"] if part == "functional" else ["test/cluster/**/*.ts"]
    cmd += ["--reporter", "json", "--reporter-option", "output=" + report]
    if args.grep:
        cmd += ["--grep", args.grep]
    env = dict(os.environ, TS_NODE_TRANSPILE_ONLY="true", NODE_ENV="test")
    if part == "functional":
        srv = benchlib.Server(binary, workdir=wd, port=PORT)
    else:
        shutil.rmtree(wd)
        up = cluster_up(args, name, binary, "cluster")
        if up.returncode or not replicas_attached(CLUSTER_BASE):
            cluster_up(args, name, binary, "stop")
            sys.exit("%s: cluster-up failed or replicas did not attach: %s%s" % (name, up.stdout, up.stderr))
    try:
        try:
            out = subprocess.run(cmd, cwd=args.src, env=env, capture_output=True, timeout=args.timeout)
            status = "exit %d" % out.returncode
            text = (out.stdout + out.stderr).decode(errors="replace")
        except subprocess.TimeoutExpired as e:
            status = "timed out after %ds" % args.timeout
            text = ((e.stdout or b"") + (e.stderr or b"")).decode(errors="replace")
    finally:
        if part == "functional":
            srv.stop()
        else:
            cluster_up(args, name, binary, "stop")
    log = os.path.join(args.work, name + ".log")
    with open(log, "w") as f:
        f.write(text)
    if not os.path.exists(report):
        sys.exit("%s: no mocha report (%s); see %s" % (engine, status, log))
    with open(report) as f:
        data = json.load(f)
    # mocha's "tests" list has every test once, in order, with its outcome
    # in "err" (pending ones have no "duration"; a hook's failure is in
    # "failures" only).  Titles repeat (the same name twice in a file):
    # the second one is "title #2".
    results = {}
    for t in data["tests"]:
        title = "%s: %s" % (t["file"].split("/test/", 1)[-1], t["fullTitle"])
        n, base = 1, title
        while title in results:
            n += 1
            title = "%s #%d" % (base, n)
        results[title] = "failed" if t.get("err") else "passed" if "duration" in t else "pending"
    tests = {(t["file"], t["fullTitle"]) for t in data["tests"]}
    for t in data["failures"]:
        if (t["file"], t["fullTitle"]) not in tests:
            results["%s: %s" % (t["file"].split("/test/", 1)[-1], t["fullTitle"])] = "failed"
    print("%s: %s, %s (log: %s, report: %s)" % (name, status, data["stats"], log, report))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True, help="an ioredis tree with its dev dependencies installed")
    ap.add_argument("--ref", default=REF74, help="the reference redis-server (Redis 7.4.1)")
    ap.add_argument("--work", default="/tmp/rl-ioredis")
    ap.add_argument("--timeout", type=int, default=900, help="seconds for one server's run")
    ap.add_argument("--only", choices=["ours", "redis"])
    ap.add_argument("--grep", help="mocha --grep (a subset)")
    ap.add_argument("--cluster", action="store_true", help="also test/cluster (test:cluster) on 6-node clusters")
    ap.add_argument("--in-namespace", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.src = os.path.abspath(args.src)
    args.work = os.path.abspath(args.work)
    for sub in ("test/functional", "node_modules/.bin/mocha", "package.json"):
        if not os.path.exists(os.path.join(args.src, sub)):
            sys.exit("%s has no %s (see --help)" % (args.src, sub))
    if not os.access(benchlib.OURS, os.X_OK):
        sys.exit("no %s: run make first" % benchlib.OURS)
    engines = [args.only] if args.only else ["ours", "redis"]
    if "redis" in engines and not os.access(args.ref, os.X_OK):
        sys.exit("no %s: build it with utils/dev/redis74-ref.sh or pass --ref" % args.ref)
    if not args.in_namespace:
        # Everything below runs where only loopback exists.
        cmd = ["unshare", "-rn", sys.executable, os.path.abspath(__file__), "--in-namespace"] + sys.argv[1:]
        return subprocess.run(cmd).returncode
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    os.makedirs(args.work, exist_ok=True)
    with open(os.path.join(args.src, "package.json")) as f:
        version = json.load(f)["version"]
    print("ioredis %s" % version)
    binaries = {"ours": benchlib.OURS, "redis": args.ref}
    res = {e: run_engine(args, e, binaries[e]) for e in engines}
    if args.cluster:
        for e in engines:
            res[e].update(run_engine(args, e, binaries[e], "cluster"))
    for part in ("functional", "cluster") if args.cluster else ("functional",):
        for e in engines:
            got = [r for t, r in res[e].items() if t.startswith(part + "/")]
            print("%-10s %-5s passed %d, failed %d, pending %d" % (
                part, e, got.count("passed"), got.count("failed"), got.count("pending")))
    if len(engines) < 2:
        return 0
    passed = {e: {t for t, r in res[e].items() if r == "passed"} for e in engines}
    return print_one_side_only(res, passed, "Redis")


if __name__ == "__main__":
    sys.exit(main())
