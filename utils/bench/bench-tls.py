#!/usr/bin/python3
"""bench-tls.py: TLS throughput, server CPU per request and idle-client
memory, redis-like (epoll and io_uring engines) against Debian's
redis-server 7.0.15, with the same certificates and the default cipher.

Certificates are made in a temporary directory with the openssl command
line.  Each server is started with a plain port (for INFO) and a tls-port;
Debian's redis-benchmark --tls runs SET and GET (-c 50, no pipelining and
-P 16) against each, alternating servers run by run; server CPU is
utime+stime around the run.  --idle N opens N idle TLS connections to each
server (Python ssl sockets) and reports the RSS growth per connection.

--handshakes N runs redis-benchmark -k 0 (a new TLS connection per
request) for N requests.

  utils/bench/bench-tls.py [--runs 3] [--requests 100000] [--idle 2000] [--handshakes 3000] [--skip-throughput]"""
import argparse
import os
import resource
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def make_certs(d):
    def run(*a):
        subprocess.run(["openssl", *a], cwd=d, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run("genrsa", "-out", "ca.key", "2048")
    run("req", "-x509", "-new", "-nodes", "-sha256", "-key", "ca.key", "-days", "30", "-subj", "/CN=bench CA",
        "-out", "ca.crt")
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for n in ("server", "client"):
        run("genrsa", "-out", n + ".key", "2048")
        run("req", "-new", "-sha256", "-subj", "/CN=" + n, "-key", n + ".key", "-out", n + ".csr")
        run("x509", "-req", "-sha256", "-in", n + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "30", "-extfile", "san.ext", "-out", n + ".crt")
    return {n: os.path.join(d, n) for n in ("ca.crt", "server.crt", "server.key", "client.crt", "client.key")}


def start(binary, certs, engine=None):
    tport = benchlib.free_port()
    extra = ["--tls-port", str(tport), "--tls-cert-file", certs["server.crt"], "--tls-key-file", certs["server.key"],
             "--tls-ca-cert-file", certs["ca.crt"], "--maxclients", "20000"]
    if engine:
        extra += ["--io-engine", engine]
    s = benchlib.Server(binary, extra)
    s.tls_port = tport
    return s


def bench(s, certs, test, pipeline, n, keepalive=1):
    cmd = ["redis-benchmark", "-p", str(s.tls_port), "--tls", "--cacert", certs["ca.crt"], "--cert",
           certs["client.crt"], "--key", certs["client.key"], "-c", "50", "-n", str(n), "-P", str(pipeline),
           "-t", test, "--csv", "-k", str(keepalive)]
    cpu0 = s.cpu_seconds()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    cpu = s.cpu_seconds() - cpu0
    rps = float(out.strip().splitlines()[-1].split(",")[1].strip('"'))
    return rps, cpu / n * 1e6


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def idle_cost(s, certs, count):
    ctx = ssl.create_default_context(cafile=certs["ca.crt"])
    ctx.load_cert_chain(certs["client.crt"], certs["client.key"])
    before = rss_kb(s.pid)
    conns = []
    for _ in range(count):
        raw = socket.create_connection(("127.0.0.1", s.tls_port))
        c = ctx.wrap_socket(raw, server_hostname="localhost")
        c.sendall(b"PING\r\n")
        c.recv(16)
        conns.append(c)
    time.sleep(3)  # past the idle query-buffer release
    after = rss_kb(s.pid)
    for c in conns:
        c.close()
    return (after - before) * 1024 / count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--requests", type=int, default=100000)
    ap.add_argument("--idle", type=int, default=0)
    ap.add_argument("--handshakes", type=int, default=0, help="requests of the -k 0 run (0: skipped)")
    ap.add_argument("--skip-throughput", action="store_true")
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    d = tempfile.mkdtemp(prefix="rl-bench-tls-")
    certs = make_certs(d)
    servers = {"redis-like io_uring": start(benchlib.OURS, certs, "io_uring"),
               "redis-like epoll": start(benchlib.OURS, certs, "epoll"),
               "redis 7.0.15": start(benchlib.REDIS, certs)}
    try:
        for test in (() if a.skip_throughput else ("set", "get")):
            for p in (1, 16):
                res = {k: [] for k in servers}
                for _ in range(a.runs):
                    for name, s in servers.items():
                        res[name].append(bench(s, certs, test, p, a.requests if p == 1 else a.requests * 4))
                print("\n%s -P %d (medians of %d): requests/s, server CPU us/request" % (test.upper(), p, a.runs))
                ref = res["redis 7.0.15"]
                ref_rps = statistics.median(r for r, _ in ref)
                ref_cpu = statistics.median(c for _, c in ref)
                for name, rs in res.items():
                    rps = statistics.median(r for r, _ in rs)
                    cpu = statistics.median(c for _, c in rs)
                    print("  %-20s %10.0f rps (%.2fx)  %6.2f us/req (%.2fx)" % (name, rps, rps / ref_rps, cpu,
                                                                            cpu / ref_cpu))
        if a.handshakes:
            res = {k: [] for k in servers}
            for _ in range(a.runs):
                for name, s in servers.items():
                    res[name].append(bench(s, certs, "ping_mbulk", 1, a.handshakes, keepalive=0))
            print("\nnew connection per request (-k 0, PING; medians of %d): handshakes/s, server CPU us each" % a.runs)
            ref_rps = statistics.median(r for r, _ in res["redis 7.0.15"])
            ref_cpu = statistics.median(c for _, c in res["redis 7.0.15"])
            for name, rs in res.items():
                rps = statistics.median(r for r, _ in rs)
                cpu = statistics.median(c for _, c in rs)
                print("  %-20s %10.0f /s (%.2fx)  %8.1f us (%.2fx)" % (name, rps, rps / ref_rps, cpu, cpu / ref_cpu))
        if a.idle:
            print("\n%d idle TLS clients: RSS per client" % a.idle)
            for name, s in servers.items():
                print("  %-20s %8.0f bytes" % (name, idle_cost(s, certs, a.idle)))
    finally:
        for s in servers.values():
            s.remove()


if __name__ == "__main__":
    main()
