#!/usr/bin/python3
"""bench-io-engine: our two socket engines against Debian's redis-server.

Starts three servers on free loopback ports (redis-like with `--io-engine
epoll`, redis-like with `--io-engine io_uring`, redis-server 7.0.15), then
for each mode (no pipelining, -P 16) runs redis-benchmark -c 50 -t set,get
-r 100000 (random keys; --keyspace 0 for the one key of a bare run)
against each in turn, --runs times (the order rotates every round, so
machine load falls on all three alike), and prints per server the median
requests/s and the median server CPU (utime+stime from /proc/PID/stat)
per request, with ratios to redis-server.  With --syscalls it then runs
one shorter benchmark per server and mode and prints system calls per
request, counted by `perf stat` on the system call tracepoints (strace,
used before, stopped the server at every call, which changed the very
batching being counted: it showed 0.025 epoll_wait per request for Redis
where there are 0.2).

With --perf RUNS it records each server with `perf record -g` over RUNS
more rotating benchmarks per mode and prints its CPU per request split
by where it went
(utils/bench/perf_categories.py: user space, the send path with the peer's
loopback receive counted apart, receives, sleeping and waking, system call
entry, epoll, ring bookkeeping), scaled to the CPU /proc measured in the
same run.

--variant LABEL=BINARY[,ARG...] (repeatable) adds one more server, run
with the ARGs (default `--io-engine io_uring`), e.g. a build without the
coalescing wait (CFLAGS=-DURING_COALESCE_MIN=1000000), measured in the
same rotation.  Besides CPU per request each table gives its user-space
part and the voluntary context switches per request (the loop going to
sleep: on a VM each costs a wake-up far dearer than a system call).

usage: utils/bench/bench-io-engine.py [--runs 5] [--requests 200000]
                                [--pipelines 1,16] [--pipelined-requests N]
                                [--server src/redis-like-server] [--syscalls]
                                [--perf RUNS] [--variant LABEL=BINARY ...]
                                [--keyspace 100000]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import perf_categories  # noqa: E402

ROOT, REDIS = benchlib.ROOT, benchlib.REDIS


cpu_seconds = benchlib.cpu_seconds


def start(binary, extra=()):
    """(process, port): a server on a free loopback port (benchlib.py)."""
    s = benchlib.Server(binary, extra, log=False, wait="any", prefix="bench-engine-")
    return s.proc, s.port


KEYSPACE = 100000  # -r: random keys over this many (--keyspace; 0 = one key, as redis-benchmark without -r)


def bench(port, requests, pipeline):
    cmd = ["redis-benchmark", "-p", str(port), "-q", "--csv", "-n", str(requests), "-c", "50", "-t", "set,get"]
    if KEYSPACE:
        cmd += ["-r", str(KEYSPACE)]
    if pipeline > 1:
        cmd += ["-P", str(pipeline)]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    rps = {}
    for line in out.splitlines():
        parts = [x.strip('"') for x in line.split(",")]
        if len(parts) >= 2 and parts[0] != "test":
            rps[parts[0]] = float(parts[1])
    return rps


SYSCALLS = ("read", "write", "epoll_wait", "io_uring_enter")


def syscalls_per_request(pid, port, requests, pipeline):
    """perf stat over one benchmark, counting at the system call
    tracepoints (strace stops the server at every call and so changes how
    many requests each loop round finds, and with it the counts):
    (total calls / request, the main ones per request)."""
    events = ["raw_syscalls:sys_enter"] + [f"syscalls:sys_enter_{n}" for n in SYSCALLS]
    fd, path = tempfile.mkstemp(prefix="perfstat-")
    os.close(fd)
    st = subprocess.Popen(["perf", "stat", "-x,", "-o", path, "-e", ",".join(events), "-p", str(pid)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    rps = bench(port, requests, pipeline)
    st.send_signal(2)
    st.wait()
    counts = {}
    with open(path) as f:
        for line in f:
            parts = line.strip().split(",")
            if len(parts) > 2 and parts[0].replace(".", "").isdigit():
                counts[parts[2].split("sys_enter_")[-1]] = float(parts[0])
    os.unlink(path)
    n = requests * max(len(rps), 1)
    total = counts.get("raw_syscalls:sys_enter", 0)
    return total / n, ", ".join(f"{name} {counts.get(name, 0) / n:.3f}" for name in SYSCALLS)


def csv_rows(out):
    """{test: [fields after the name]} from redis-benchmark style --csv output."""
    rows = {}
    for line in out.splitlines():
        parts = [x.strip('"') for x in line.split(",")]
        if len(parts) >= 2 and parts[0] != "test":
            rows[parts[0]] = [float(x) for x in parts[1:]]
    return rows


def lone_after_burst(port):
    """(req/s, p50 ms) of one client right after a 50-client burst: a wait
    tuned for many talkers must not hold a lone client's requests."""
    subprocess.run(["redis-benchmark", "-p", str(port), "-q", "-c", "50", "-n", "20000", "-t", "ping_mbulk"],
                   capture_output=True)
    out = subprocess.run(["redis-benchmark", "-p", str(port), "--csv", "-c", "1", "-n", "3000", "-t", "ping_mbulk"],
                         capture_output=True, text=True).stdout
    row = next(iter(csv_rows(out).values()), [0, 0, 0, 0])
    return row[0], row[3]


def open_loop(pid, port, rate, seconds):
    """(achieved req/s, p50 ms, p99 ms, server CPU us/request) of 50
    clients sending GETs at a fixed total rate (latency from each request's
    intended send time): the latency a coalescing wait adds when arrivals
    do not follow replies."""
    tool = os.path.join(ROOT, "src", "redis-like-benchmark")
    before = cpu_seconds(pid)
    out = subprocess.run([tool, "-p", str(port), "--csv", "-c", "50", "--rate", str(rate), "--duration", str(seconds),
                          "-t", "get"], capture_output=True, text=True).stdout
    used = cpu_seconds(pid) - before
    row = next(iter(csv_rows(out).values()), [0] * 7)
    return row[0], row[3], row[5], used / max(row[0] * seconds, 1) * 1e6


def proc_sample(pid):
    """(user s, system s, voluntary context switches of the main thread):
    a voluntary switch is the loop going to sleep, each one paid again by
    a wake-up."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    vcs = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches"):
                vcs = int(line.split()[1])
    return int(fields[11]) / tck, int(fields[12]) / tck, vcs


def perf_split(pid, port, requests, pipeline):
    """(CPU us/request, {category: us/request}) over one benchmark."""
    fd, path = tempfile.mkstemp(prefix="perf-", suffix=".data")
    os.close(fd)
    rec = subprocess.Popen(["perf", "record", "-q", "-F", "4000", "-g", "-p", str(pid), "-o", path],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    before = cpu_seconds(pid)
    rps = bench(port, requests, pipeline)
    used = cpu_seconds(pid) - before
    rec.send_signal(2)
    rec.wait()
    text = subprocess.run(["perf", "script", "-i", path], capture_output=True, text=True).stdout
    os.unlink(path)
    counts = perf_categories.categories(text.splitlines())
    total = sum(counts.values()) or 1
    per = used / (requests * max(len(rps), 1)) * 1e6
    return per, {k: per * counts[k] / total for k in perf_categories.ORDER}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--server", default=os.path.join(ROOT, "src", "redis-like-server"))
    ap.add_argument("--syscalls", action="store_true")
    ap.add_argument("--perf", type=int, default=0, metavar="RUNS")
    ap.add_argument("--variant", action="append", default=[], metavar="LABEL=BINARY")
    ap.add_argument("--keyspace", type=int, default=100000,
                    help="redis-benchmark -r: random keys over this many (default 100000; 0: one key)")
    ap.add_argument("--pipelines", default="1,16", help="comma-separated -P values to run (default 1,16)")
    ap.add_argument("--no-epoll", action="store_true", help="leave out the epoll server")
    ap.add_argument("--latency", type=int, default=0, metavar="RUNS",
                    help="RUNS rotating runs of a lone client after a burst and of open-loop GETs (--rates)")
    ap.add_argument("--rates", default="10000,30000", help="open-loop total rates for --latency")
    # CPU time is read in clock ticks (10 ms): a pipelined run of 100,000
    # requests lasts well under a second, so its figure moves in steps of
    # 0.05 us; more requests at -P 16 make the steps finer.
    ap.add_argument("--pipelined-requests", type=int, default=0, metavar="N",
                    help="requests per test at -P > 1 (default: --requests)")
    a = ap.parse_args()
    global KEYSPACE
    KEYSPACE = a.keyspace
    pipelines = [int(x) for x in a.pipelines.split(",")]
    servers = {} if a.no_epoll else {"redis-like epoll": start(a.server, ["--io-engine", "epoll"])}
    servers["redis-like io_uring"] = start(a.server, ["--io-engine", "io_uring"])
    for v in a.variant:
        label, spec = v.split("=", 1)
        binary, *args = spec.split(",")
        servers[f"redis-like {label}"] = start(binary, args or ["--io-engine", "io_uring"])
    servers["redis 7.0.15"] = start(REDIS)
    names = list(servers)
    try:
        print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        for pipeline in pipelines if a.runs > 0 else ():
            nreq_mode = a.pipelined_requests if pipeline > 1 and a.pipelined_requests else a.requests
            rps = {n: [] for n in names}
            cpu = {n: [] for n in names}
            user = {n: [] for n in names}
            sleeps = {n: [] for n in names}
            for run in range(a.runs):
                k = run % len(names)
                order = names[k:] + names[:k]
                for n in order:
                    p, port = servers[n]
                    subprocess.run(["redis-cli", "-p", str(port), "FLUSHALL"], capture_output=True)
                    before = proc_sample(p.pid)
                    r = bench(port, nreq_mode, pipeline)
                    after = proc_sample(p.pid)
                    nreq = nreq_mode * max(len(r), 1)
                    rps[n].append(r)
                    cpu[n].append((after[0] + after[1] - before[0] - before[1]) / nreq * 1e6)
                    user[n].append((after[0] - before[0]) / nreq * 1e6)
                    sleeps[n].append((after[2] - before[2]) / nreq)
            mode = f"-P {pipeline}" if pipeline > 1 else "no pipelining"
            keys = f"-r {a.keyspace}" if a.keyspace else "one key (no -r)"
            print(f"\n### redis-benchmark -c 50 -n {nreq_mode} {keys} -t set,get, {mode}: "
                  f"medians of {a.runs} rotating runs\n")
            print("| server | SET req/s | GET req/s | server CPU us/request | CPU ratio to redis | SET, GET req/s ratio "
                  "| user us/request | sleeps/request |")
            print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
            med = {n: {t: statistics.median(r.get(t, 0) for r in rps[n]) for t in ("SET", "GET")} for n in names}
            mcpu = {n: statistics.median(cpu[n]) for n in names}
            ref = "redis 7.0.15"
            for n in names:
                print(f"| {n} | {med[n]['SET']:,.0f} | {med[n]['GET']:,.0f} | {mcpu[n]:.2f} | "
                      f"{mcpu[n] / mcpu[ref]:.2f} | {med[n]['SET'] / med[ref]['SET']:.2f}, {med[n]['GET'] / med[ref]['GET']:.2f} "
                      f"| {statistics.median(user[n]):.2f} | {statistics.median(sleeps[n]):.3f} |")
            print("\nper-run CPU us/request: " + "; ".join(f"{n}: " + " ".join(f"{x:.2f}" for x in cpu[n]) for n in names))
        if a.syscalls:
            print("\n### system calls per request (perf stat, syscall tracepoints, one run each, -n %d)\n" % (a.requests // 4))
            print("| server | mode | syscalls/request | of which |")
            print("| --- | --- | ---: | --- |")
            for pipeline in pipelines:
                for n in names:
                    p, port = servers[n]
                    per, top = syscalls_per_request(p.pid, port, a.requests // 4, pipeline)
                    print(f"| {n} | {'-P 16' if pipeline > 1 else 'no pipelining'} | {per:.3f} | {top} |")
        if a.perf:
            cats = perf_categories.ORDER
            print("\n### server CPU us/request by category (perf record -g, medians of %d rotating runs, -n %d%s)\n"
                  % (a.perf, a.requests // 2,
                     f", -n {a.pipelined_requests // 2} pipelined" if a.pipelined_requests else ""))
            print("| server | mode | total | " + " | ".join(cats) + " |")
            print("| --- | --- | ---: | " + " | ".join("---:" for _ in cats) + " |")
            for pipeline in pipelines:
                nreq_mode = a.pipelined_requests if pipeline > 1 and a.pipelined_requests else a.requests
                got = {n: [] for n in names}
                for run in range(a.perf):
                    k = run % len(names)
                    for n in names[k:] + names[:k]:
                        p, port = servers[n]
                        got[n].append(perf_split(p.pid, port, nreq_mode // 2, pipeline))
                mode = "-P 16" if pipeline > 1 else "no pipelining"
                for n in names:
                    per = statistics.median(g[0] for g in got[n])
                    split = {k: statistics.median(g[1][k] for g in got[n]) for k in cats}
                    print(f"| {n} | {mode} | {per:.2f} | " + " | ".join(f"{split[k]:.2f}" for k in cats) + " |")
        if a.latency:
            rates = [int(x) for x in a.rates.split(",")]
            lone = {n: [] for n in names}
            ol = {(n, r): [] for n in names for r in rates}
            for run in range(a.latency):
                k = run % len(names)
                for n in names[k:] + names[:k]:
                    p, port = servers[n]
                    lone[n].append(lone_after_burst(port))
                    for r in rates:
                        ol[(n, r)].append(open_loop(p.pid, port, r, 3))
            ref = "redis 7.0.15"
            print(f"\n### lone client after a burst and open-loop GETs: medians of {a.latency} rotating runs\n")
            print("| server | lone -c 1 PING_MBULK req/s (ratio) | lone p50 ms | " +
                  " | ".join(f"{r // 1000}k/s open loop: p50 / p99 ms, CPU us/req" for r in rates) + " |")
            print("| --- | ---: | ---: | " + " | ".join("---:" for _ in rates) + " |")
            ref_lone = statistics.median(x[0] for x in lone[ref])
            for n in names:
                lr = statistics.median(x[0] for x in lone[n])
                cells = []
                for r in rates:
                    got = ol[(n, r)]
                    cells.append(f"{statistics.median(x[1] for x in got):.3f} / {statistics.median(x[2] for x in got):.3f}, "
                                 f"{statistics.median(x[3] for x in got):.2f}")
                print(f"| {n} | {lr:,.0f} ({lr / ref_lone:.2f}) | {statistics.median(x[1] for x in lone[n]):.3f} | "
                      + " | ".join(cells) + " |")
            print("\nper-run lone req/s: " + "; ".join(f"{n}: " + " ".join(f"{x[0]:.0f}" for x in lone[n]) for n in names))
        print("\nio_uring loop counters (INFO stats, whole run):")
        for n in names:
            out = subprocess.run(["redis-cli", "-p", str(servers[n][1]), "INFO", "stats"], capture_output=True, text=True).stdout
            got = [ln.strip() for ln in out.splitlines() if ln.startswith("io_uring_")]
            if got:
                print(f"  {n}: " + " ".join(got))
    finally:
        benchlib.stop_all([p for p, _ in servers.values()])


if __name__ == "__main__":
    sys.exit(main())
