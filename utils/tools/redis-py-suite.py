#!/usr/bin/python3
"""Run redis-py 5.0.8's own standalone test suite (tests/ of its sources,
never copied into ours, sync and asyncio, its SSL tests included) against
a server of ours, then against Debian's redis-server 7.0.15 on the same
ports, and print both pass counts and the tests that pass on one only
(issues 46 and 47; the counts are in docs/compatibility.md, "Test suites").

    utils/tools/redis-py-suite.py --src /path/to/redis-py-5.0.8
        [--port 6379] [--tls-port 6666] [--work /tmp/rl-pysuite] [--only ours|redis]
        [--protocol 2|3] [-k EXPR]

--src is a tree holding redis-py's tests/, redis/ (the library the tests
import: Debian's python3-redis is older) and pytest.ini of tag v5.0.8, e.g.
    git -C redis-py archive v5.0.8 tests redis pytest.ini | tar -x -C DIR
The suite wants pytest-asyncio and pytest-timeout (Debian's
python3-pytest-asyncio, python3-pytest-timeout).

What is run: `-m "(not onlycluster or ssl) and not redismod and not
replica"` over tests/, as redis-py's CI runs its standalone pass, plus the
asyncio cluster client's SSL class (marked onlycluster and ssl: it mocks
the slots and talks to the TLS port).  Left out the same way for both
servers: the module tests (RedisBloom, RedisJSON, RediSearch,
RedisTimeSeries, RedisGraph, the RedisGears `tfunction`/`tfcall` tests:
neither server has modules), and the two `replica` tests, which dial a
replica on the fixed port 6380.  The defaults are the ports the suite
names: a few of its tests dial localhost:6379 whatever --redis-url says.

The suite copies tests/, redis/ and pytest.ini into WORK/src and makes,
with the openssl CLI, a CA, a server and a client certificate where its
tests look for them (dockers/stunnel/keys/, the names of redis-py's
create_certs.sh).  Where redis-py's CI puts stunnel (TLS, no client
certificate asked) in front of the server, each server here serves TLS
itself: `--port PORT --tls-port TLS_PORT --tls-auth-clients no`, and the
suite gets `--redis-ssl-url rediss://127.0.0.1:TLS_PORT`.  Loopback only
(the loopback guard of redis-py-cluster-suite.py is loaded into the
suite: the OCSP tests that dial public web sites fail alike on both).
Exit status 1 when a test passes on Redis and not on ours."""
import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time

from suitelib import print_one_side_only

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENGINES = {"ours": os.path.join(ROOT, "src", "redis-like-server"), "redis": "/usr/bin/redis-server"}
MARKERS = "(not onlycluster or ssl) and not redismod and not replica"
NOT_K = "not tfunction and not tfcall"
MODULE_FILES = ["test_bloom.py", "test_json.py", "test_search.py", "test_timeseries.py", "test_graph.py"]
TESTS = ["tests"]


def cluster_tool():
    """The cluster suite's loopback guard and port check, shared."""
    path = os.path.join(ROOT, "utils", "tools", "redis-py-cluster-suite.py")
    spec = importlib.util.spec_from_file_location("redis_py_cluster_suite", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CLUSTER = cluster_tool()


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, capture_output=True, timeout=60)


def make_certs(keys):
    """dockers/stunnel/create_certs.sh's files, made here: a CA, and a
    server and a client certificate it signs."""
    os.makedirs(keys, exist_ok=True)
    openssl("genrsa", "-out", "ca-key.pem", "2048", cwd=keys)
    openssl("req", "-new", "-x509", "-nodes", "-days", "3650", "-key", "ca-key.pem", "-out", "ca-cert.pem",
            "-subj", "/CN=redis-py-ca", cwd=keys)
    for who in ("server", "client"):
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", who + "-key.pem", "-out", who + "-req.pem",
                "-subj", "/CN=redis-py-" + who, cwd=keys)
        openssl("x509", "-req", "-days", "3650", "-set_serial", "01", "-in", who + "-req.pem", "-out",
                who + "-cert.pem", "-CA", "ca-cert.pem", "-CAkey", "ca-key.pem", cwd=keys)


def prepare(args):
    """WORK/src: the suite's tests and library, certificates made now."""
    src = os.path.join(args.work, "src")
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    for sub in ("tests", "redis"):
        shutil.copytree(os.path.join(args.src, sub), os.path.join(src, sub),
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(args.src, "pytest.ini"), src)
    make_certs(os.path.join(src, "dockers", "stunnel", "keys"))
    with open(os.path.join(args.work, "pyclu_guard.py"), "w") as f:
        f.write(CLUSTER.GUARD)
    return src


def start_server(args, engine, src):
    d = os.path.join(args.work, engine)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    keys = os.path.join(src, "dockers", "stunnel", "keys")
    cmd = [ENGINES[engine], "--bind", "127.0.0.1", "--port", str(args.port), "--tls-port", str(args.tls_port),
           "--tls-cert-file", os.path.join(keys, "server-cert.pem"),
           "--tls-key-file", os.path.join(keys, "server-key.pem"),
           "--tls-ca-cert-file", os.path.join(keys, "ca-cert.pem"), "--tls-auth-clients", "no",
           "--dir", d, "--logfile", os.path.join(d, "server.log"), "--save", "", "--appendonly", "no",
           "--enable-debug-command", "yes", "--daemonize", "no"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 20
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit("%s: server exited (%s)" % (engine, os.path.join(d, "server.log")))
        try:
            out = subprocess.run(["redis-cli", "-p", str(args.port), "ping"], capture_output=True, text=True,
                                 timeout=5)
            if out.stdout.strip() == "PONG":
                return proc
        except subprocess.TimeoutExpired:
            pass
        time.sleep(0.2)
    proc.kill()
    sys.exit("%s: server did not answer PING" % engine)


def run_suite(args, engine, src):
    """The suite's outcome per test id: PASSED, FAILED, ERROR, SKIPPED, XFAIL, XPASS."""
    busy = [p for p in (args.port, args.tls_port) if not CLUSTER.port_free(p)]
    if busy:
        sys.exit("ports in use: %s (--port, --tls-port)" % busy)
    proc = start_server(args, engine, src)
    try:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([args.work, src]))
        cmd = [sys.executable, "-m", "pytest", "-p", "pyclu_guard", "-p", "no:cacheprovider", "-q", "-rA",
               "-m", MARKERS, "-k", NOT_K if not args.k else "(%s) and (%s)" % (NOT_K, args.k),
               "--redis-url=redis://127.0.0.1:%d/0" % args.port,
               "--redis-ssl-url=rediss://127.0.0.1:%d" % args.tls_port, "--protocol", args.protocol]
        cmd += ["--ignore=tests/%s%s" % (sub, f) for sub in ("", "test_asyncio/") for f in MODULE_FILES]
        cmd += ["--ignore=tests/test_graph_utils"]
        out = subprocess.run(cmd + TESTS, cwd=src, env=env, capture_output=True, text=True, timeout=args.timeout)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    log = os.path.join(args.work, engine + ".log")
    with open(log, "w") as f:
        f.write(out.stdout + out.stderr)
    results = {}
    for line in out.stdout.splitlines():
        m = re.match(r"(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (tests/\S+)", line)
        if m:
            # A test whose teardown errs after it passed counts as not passed.
            if results.get(m.group(2)) != "ERROR":
                results[m.group(2)] = m.group(1)
    tail = out.stdout.strip().splitlines()[-1:] or ["(no output)"]
    print("%s: %s (log: %s)" % (engine, tail[0], log))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True, help="redis-py 5.0.8's tests, redis, pytest.ini")
    ap.add_argument("--port", type=int, default=6379, help="plain-text port (the suite's own default)")
    ap.add_argument("--tls-port", type=int, default=6666, help="TLS port (where the suite expects stunnel)")
    ap.add_argument("--work", default="/tmp/rl-pysuite")
    ap.add_argument("--timeout", type=int, default=2400, help="seconds for one engine's run")
    ap.add_argument("--protocol", choices=["2", "3"], default="2", help="RESP version of the suite's clients")
    ap.add_argument("--only", choices=sorted(ENGINES))
    ap.add_argument("-k", help="pytest -k expression (a subset)")
    args = ap.parse_args()
    args.src = os.path.abspath(args.src)
    args.work = os.path.abspath(args.work)
    for sub in ("tests/test_ssl.py", "tests/conftest.py", "redis/connection.py", "pytest.ini"):
        if not os.path.exists(os.path.join(args.src, sub)):
            sys.exit("%s has no %s (see --help)" % (args.src, sub))
    for plugin, deb in (("pytest_asyncio", "python3-pytest-asyncio"), ("pytest_timeout", "python3-pytest-timeout")):
        if subprocess.run([sys.executable, "-c", "import " + plugin]).returncode:
            sys.exit("%s is missing: apt-get install %s" % (plugin, deb))
    if not os.access(ENGINES["ours"], os.X_OK):
        sys.exit("no %s: run make first" % ENGINES["ours"])
    os.makedirs(args.work, exist_ok=True)
    src = prepare(args)
    engines = [args.only] if args.only else ["ours", "redis"]
    res = {e: run_suite(args, e, src) for e in engines}
    passed = {e: {t for t, r in res[e].items() if r in ("PASSED", "XPASS")} for e in engines}
    for e in engines:
        failed = sum(1 for r in res[e].values() if r in ("FAILED", "ERROR"))
        print("%-5s passed %d, failed or errored %d" % (e, len(passed[e]), failed))
    if len(engines) < 2:
        return 0
    return print_one_side_only(res, passed, "Redis 7.0.15")


if __name__ == "__main__":
    sys.exit(main())
