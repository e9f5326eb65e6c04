#!/usr/bin/python3
"""Run redis-py's cluster tests (`-m onlycluster` of tests/test_cluster.py
and tests/test_asyncio/test_cluster.py, redis-py 5.0.8's sources, never
copied into ours) against a 6-node cluster of ours (3 masters, 3 replicas),
then against a 6-node cluster of Debian's redis-server 7.0.15 on the same
ports, and print both pass counts and the tests that pass on one only
(issue 45; the counts are in docs/cluster.md).

    utils/tools/redis-py-cluster-suite.py --src /path/to/redis-py-5.0.8
        [--base-port 16379] [--work /tmp/rl-pycluster] [--only ours|redis] [-k EXPR]

--src is a tree holding redis-py's tests/, redis/ (the library the tests
import: Debian's python3-redis is older), dockers/ (the TLS tests' keys)
and pytest.ini of tag v5.0.8, e.g.
    git -C redis-py archive v5.0.8 tests redis dockers pytest.ini | tar -x -C DIR
The suite wants pytest-asyncio and pytest-timeout (Debian's
python3-pytest-asyncio, python3-pytest-timeout).

Nodes use ports BASE..BASE+5 (the suite names 16379 and 16380 itself) and
bus ports +10000, made by utils/tools/cluster-up and stopped by it (by pid).
Loopback only: a pytest plugin (written into WORK) refuses to resolve or
dial any address but loopback, so the few tests that would dial elsewhere
fail alike on both.  The TLS tests fail on both (no stunnel here).
Exit status 1 when a test passes on Redis and not on ours."""
import argparse
import os
import re
import shutil
import socket
import subprocess
import sys

from suitelib import print_one_side_only

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESTS = ["tests/test_cluster.py", "tests/test_asyncio/test_cluster.py"]
ENGINES = {"ours": os.path.join(ROOT, "src", "redis-like-server"), "redis": "/usr/bin/redis-server"}

GUARD = '''"""Loaded by redis-py-cluster-suite.py: loopback only."""
import ipaddress
import socket

_getaddrinfo = socket.getaddrinfo
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex


def _loopback(host):
    if isinstance(host, bytes):
        host = host.decode()
    if host in (None, "localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def getaddrinfo(host, *args, **kwargs):
    if not _loopback(host):
        raise socket.gaierror(socket.EAI_NONAME, "loopback only: %r" % (host,))
    return _getaddrinfo(host, *args, **kwargs)


def _check(sock, addr):
    if sock.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(addr[0]):
        raise ConnectionRefusedError("loopback only: %r" % (addr,))


def connect(self, addr):
    _check(self, addr)
    return _connect(self, addr)


def connect_ex(self, addr):
    _check(self, addr)
    return _connect_ex(self, addr)


socket.getaddrinfo = getaddrinfo
socket.socket.connect = connect
socket.socket.connect_ex = connect_ex
'''


def port_free(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT from a last run is fine
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def cluster_up(args, engine, action):
    env = dict(os.environ, CLUSTER_DIR=os.path.join(args.work, engine), CL_BASE_PORT=str(args.base_port),
               RL_SERVER=ENGINES[engine])
    cmd = [os.path.join(ROOT, "utils", "tools", "cluster-up"), action] + (["3", "1"] if action == "cluster" else [])
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def run_suite(args, engine):
    """The suite's outcome per test id: PASSED, FAILED, ERROR, SKIPPED."""
    # A fresh directory: no node may keep an RDB (the suite saves) or
    # nodes.conf of a last run; cluster-up stops what its pid files name.
    cluster_up(args, engine, "stop")
    shutil.rmtree(os.path.join(args.work, engine), ignore_errors=True)
    busy = [p for i in range(6) for p in (args.base_port + i, args.base_port + i + 10000) if not port_free(p)]
    if busy:
        sys.exit("ports in use: %s (--base-port)" % busy)
    up = cluster_up(args, engine, "cluster")
    if up.returncode:
        cluster_up(args, engine, "stop")
        sys.exit("%s: cluster-up failed: %s%s" % (engine, up.stdout, up.stderr))
    try:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([args.work, args.src]))
        cmd = [sys.executable, "-m", "pytest", "-p", "pyclu_guard", "-p", "no:cacheprovider", "-q", "-rA",
               "-m", "onlycluster", "--redis-url=redis://127.0.0.1:%d/0" % args.base_port] + TESTS
        if args.k:
            cmd += ["-k", args.k]
        out = subprocess.run(cmd, cwd=args.src, env=env, capture_output=True, text=True, timeout=args.timeout)
    finally:
        cluster_up(args, engine, "stop")
    log = os.path.join(args.work, engine + ".log")
    with open(log, "w") as f:
        f.write(out.stdout + out.stderr)
    results = {}
    for line in out.stdout.splitlines():
        m = re.match(r"(PASSED|FAILED|ERROR|SKIPPED) (tests/\S+)", line)
        if m:
            # A test whose teardown errs after it passed counts as not passed.
            if results.get(m.group(2)) != "ERROR":
                results[m.group(2)] = m.group(1)
    tail = out.stdout.strip().splitlines()[-1:] or ["(no output)"]
    print("%s: %s (log: %s)" % (engine, tail[0], log))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True, help="redis-py 5.0.8's tests, redis, dockers, pytest.ini")
    ap.add_argument("--base-port", type=int, default=16379)
    ap.add_argument("--work", default="/tmp/rl-pycluster")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds for one engine's run")
    ap.add_argument("--only", choices=sorted(ENGINES))
    ap.add_argument("-k", help="pytest -k expression (a subset)")
    args = ap.parse_args()
    args.src = os.path.abspath(args.src)
    args.work = os.path.abspath(args.work)
    for sub in TESTS + ["redis/cluster.py", "pytest.ini"]:
        if not os.path.exists(os.path.join(args.src, sub)):
            sys.exit("%s has no %s (see --help)" % (args.src, sub))
    for plugin, deb in (("pytest_asyncio", "python3-pytest-asyncio"), ("pytest_timeout", "python3-pytest-timeout")):
        if subprocess.run([sys.executable, "-c", "import " + plugin]).returncode:
            sys.exit("%s is missing: apt-get install %s" % (plugin, deb))
    if not os.access(ENGINES["ours"], os.X_OK):
        sys.exit("no %s: run make first" % ENGINES["ours"])
    os.makedirs(args.work, exist_ok=True)
    with open(os.path.join(args.work, "pyclu_guard.py"), "w") as f:
        f.write(GUARD)
    engines = [args.only] if args.only else ["ours", "redis"]
    res = {e: run_suite(args, e) for e in engines}
    passed = {e: {t for t, r in res[e].items() if r == "PASSED"} for e in engines}
    for e in engines:
        print("%-5s passed %d, failed or errored %d" % (e, len(passed[e]), len(res[e]) - len(passed[e])))
    if len(engines) < 2:
        return 0
    return print_one_side_only(res, passed, "Redis 7.0.15")


if __name__ == "__main__":
    sys.exit(main())
