#!/usr/bin/python3
"""Run hiredis' own test binary, built with SSL, against our server and
then against Debian's redis-server 7.0.15 with the same configuration,
and print both pass counts and the tests that pass on one only (issue 46;
the counts are in docs/compatibility.md, "Test suites").

    utils/tools/hiredis-suite.py --src /path/to/hiredis
        [--ref /usr/bin/redis-server] [--work /tmp/rl-hiredis] [--only ours|redis]

--src is a hiredis source tree (nothing of it is copied into ours) where
`make USE_SSL=1` has built ./hiredis-test, e.g.
    git -C hiredis archive HEAD | tar -x -C DIR && make -C DIR USE_SSL=1

Each server gets what hiredis' test.sh gives it: a plain port, a unix
socket, a tls-port with a CA, certificate and key made here with the
openssl CLI (the certificate names DNS:hiredis.test.example.com and
IP:127.0.0.1, for the --ssl-verify-name tests), `enable-debug-command
local`; hiredis-test then runs with the matching -h/-p/-s/--ssl-* options.

Loopback only: the servers and hiredis-test run in a network namespace of
their own (`unshare -rn`, which needs unprivileged user namespaces) holding
nothing but `lo`.  Two of hiredis' tests look beyond it: "Returns error
when host cannot be resolved" resolves idontexist-noreally.com (no resolver
answers there: the test still passes), and "Async connect timeout" dials
the black hole 192.168.254.254, which the namespace routes into `lo`,
where the SYN is dropped, so the dial times out as the test wants.
Exit status 1 when a test passes on Redis and not on ours."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "utils", "bench"))
import benchlib  # noqa: E402
from suitelib import print_one_side_only  # noqa: E402

PORT, TLS_PORT = 56379, 56443  # hiredis' test.sh defaults; the namespace is ours alone
VERIFY_NAME = "hiredis.test.example.com"
BLACK_HOLE = "192.168.254.254"  # what hiredis' "Async connect timeout" dials


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, capture_output=True, timeout=120)


def make_certs(work):
    """A CA and a server certificate signed by it, as hiredis' test.sh makes them."""
    d = os.path.join(work, "tls")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "ext.cnf"), "w") as f:
        f.write("subjectAltName = DNS:%s, IP:127.0.0.1\n" % VERIFY_NAME)
    openssl("genrsa", "-out", "ca.key", "2048", cwd=d)
    openssl("req", "-x509", "-new", "-nodes", "-sha256", "-key", "ca.key", "-days", "30", "-subj",
            "/CN=Hiredis Test CA", "-out", "ca.crt", cwd=d)
    openssl("genrsa", "-out", "redis.key", "2048", cwd=d)
    openssl("req", "-new", "-sha256", "-key", "redis.key", "-subj", "/CN=Hiredis Test Cert", "-out", "redis.csr",
            cwd=d)
    openssl("x509", "-req", "-sha256", "-in", "redis.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-extfile", "ext.cnf", "-days", "30", "-out", "redis.crt", cwd=d)
    return {"ca": os.path.join(d, "ca.crt"), "redis": os.path.join(d, "redis.crt"),
            "key": os.path.join(d, "redis.key")}


def run_engine(args, engine, binary, certs):
    """hiredis-test's outcome per test ("#NN title" -> PASSED/FAILED)."""
    wd = os.path.join(args.work, engine)
    shutil.rmtree(wd, ignore_errors=True)
    os.makedirs(wd)
    sock = os.path.join(wd, "redis.sock")
    conf = ["--unixsocket", sock, "--unixsocketperm", "777", "--enable-debug-command", "local",
            "--tls-port", str(TLS_PORT), "--tls-ca-cert-file", certs["ca"], "--tls-cert-file", certs["redis"],
            "--tls-key-file", certs["key"]]
    srv = benchlib.Server(binary, extra=conf, workdir=wd, port=PORT)
    try:
        deadline = time.time() + 10
        while not os.path.exists(sock) and time.time() < deadline:
            time.sleep(0.1)
        cmd = ["./hiredis-test", "-h", "127.0.0.1", "-p", str(PORT), "-s", sock, "--ssl-host", "127.0.0.1",
               "--ssl-port", str(TLS_PORT), "--ssl-ca-cert", certs["ca"], "--ssl-cert", certs["redis"], "--ssl-key",
               certs["key"], "--ssl-verify-name", VERIFY_NAME]
        try:
            out = subprocess.run(cmd, cwd=args.src, capture_output=True, timeout=args.timeout)
            text = (out.stdout + out.stderr).decode(errors="replace")
            status = "exit %d" % out.returncode
        except subprocess.TimeoutExpired as e:
            text = ((e.stdout or b"") + (e.stderr or b"")).decode(errors="replace")
            status = "timed out after %ds" % args.timeout
    finally:
        srv.stop()
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    log = os.path.join(args.work, engine + ".log")
    with open(log, "w") as f:
        f.write(text)
    results = {}
    for m in re.finditer(r"^#(\d+) (.*?)(PASSED|FAILED)$", text, re.M):
        results["#%s %s" % (m.group(1), m.group(2).strip())] = m.group(3)
    last = text.strip().splitlines()[-1:] or ["(no output)"]
    print("%s: %s, %s (log: %s)" % (engine, status, last[0], log))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", required=True, help="a hiredis tree built with make USE_SSL=1")
    ap.add_argument("--ref", default=benchlib.REDIS, help="the reference redis-server (Debian's 7.0.15)")
    ap.add_argument("--work", default="/tmp/rl-hiredis")
    ap.add_argument("--timeout", type=int, default=300, help="seconds for one server's run")
    ap.add_argument("--only", choices=["ours", "redis"])
    ap.add_argument("--in-namespace", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.src = os.path.abspath(args.src)
    args.work = os.path.abspath(args.work)
    if not os.access(os.path.join(args.src, "hiredis-test"), os.X_OK):
        sys.exit("%s has no hiredis-test: make -C %s USE_SSL=1" % (args.src, args.src))
    if not os.access(benchlib.OURS, os.X_OK):
        sys.exit("no %s: run make first" % benchlib.OURS)
    if not args.in_namespace:
        # Everything below runs where only loopback exists.
        cmd = ["unshare", "-rn", sys.executable, os.path.abspath(__file__), "--in-namespace"] + sys.argv[1:]
        return subprocess.run(cmd).returncode
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    # The async connect timeout test's black hole: a SYN routed into lo to
    # an address nobody holds is dropped there, so the dial hangs as it
    # would in the wild and nothing leaves the namespace.
    subprocess.run(["ip", "route", "add", BLACK_HOLE + "/32", "dev", "lo"], check=True)
    os.makedirs(args.work, exist_ok=True)
    certs = make_certs(args.work)
    engines = [args.only] if args.only else ["ours", "redis"]
    binaries = {"ours": benchlib.OURS, "redis": args.ref}
    res = {e: run_engine(args, e, binaries[e], certs) for e in engines}
    passed = {e: {t for t, r in res[e].items() if r == "PASSED"} for e in engines}
    for e in engines:
        print("%-5s passed %d, failed %d" % (e, len(passed[e]), len(res[e]) - len(passed[e])))
    if len(engines) < 2:
        return 0
    return print_one_side_only(res, passed, "Redis", key=lambda t: int(t[1:].split()[0]))


if __name__ == "__main__":
    sys.exit(main())
