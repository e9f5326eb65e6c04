#!/usr/bin/python3
"""bench-latency: latency against throughput, ours (both engines) against
Redis 7.0.15 and, given its binary, Valkey (issue 50).

Starts the servers on free loopback ports (redis-like `--io-engine
io_uring`, redis-like `--io-engine epoll`, Debian's redis-server, and
`--valkey PATH` if given, plus any `--variant LABEL=BINARY[,ARG...]`),
fills each with the keyspace (SET over `--keyspace` random keys, so GETs
hit), then for each connection count runs `redis-like-benchmark
--latency-sweep` over all of them in one process: their closed-loop
maxima, then the open loop (SET:GET 1:4 over the keyspace) at `--points`
percent of Redis's maximum, the servers taking turns at every point in a
rotating order, `--runs` times.  It prints per point and server the
medians of p50/p99/p99.9, the achieved rate (and in how many runs the rate
was sustained), server CPU per request, and the p50 and p99 ratios to
Redis, as a markdown table; it keeps the tool's JSON and PNG per
connection count (`--out DIR`).

`--picture FILE.png` draws every connection count's curves in one PNG
(a row per count: p50, p99, p99.9 against achieved requests/s, one curve
per server through its sustained points); `--replot` redraws it from the
JSON files a former run left in `--out` without measuring.

With `--counters` it also prints, for each redis-like io_uring server, the
ring's INFO counters over the whole sweep per receive: loop rounds,
io_uring_enter calls, submissions and sleeps, and how many rounds and
enters passed between a request's completion and the submit of its reply
(io_uring_reply_after_*): the noise-proof view of where a request waits.

usage: utils/bench/bench-latency.py [--runs 5] [--conns 10,50] [--points 50,80,90]
                              [--duration 5] [--valkey PATH] [--out DIR]
                              [--variant LABEL=BINARY[,ARG...] ...] [--counters]
                              [--picture FILE.png [--replot]]
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT, REDIS = benchlib.ROOT, benchlib.REDIS
TOOL = os.path.join(ROOT, "src", "redis-like-benchmark")


def info(port, section="stats"):
    """INFO section as {field: value} (numbers where they parse)."""
    out = subprocess.run(["redis-cli", "-p", str(port), "INFO", section], capture_output=True, text=True).stdout
    got = {}
    for line in out.splitlines():
        if ":" in line and not line.startswith("#"):
            k, v = line.split(":", 1)
            try:
                got[k] = float(v) if "." in v else int(v)
            except ValueError:
                got[k] = v.strip()
    return got


def hist(v):
    """'0=5,1=2,2=0,3+=1' -> [5, 2, 0, 1]."""
    return [int(x.split("=")[1]) for x in v.split(",")] if isinstance(v, str) else [0, 0, 0, 0]


def counters_line(before, after):
    recvs = max(after.get("io_uring_recvs", 0) - before.get("io_uring_recvs", 0), 1)
    per = {k[len("io_uring_"):]: (after[k] - before.get(k, 0)) / recvs
           for k in ("io_uring_rounds", "io_uring_busy_rounds", "io_uring_enters", "io_uring_submits", "io_uring_sleeps",
                     "io_uring_recv_rearms")
           if k in after}
    parts = [f"{k} {v:.3f}" for k, v in per.items()]
    if "io_uring_recvs_from_waits" in after:  # a build with the coalescing wait (before issue 50)
        held = after["io_uring_recvs_from_waits"] - before.get("io_uring_recvs_from_waits", 0)
        waited = after["io_uring_wait_us"] - before.get("io_uring_wait_us", 0)
        parts.append(f"delivered by a coalescing wait {100 * held / recvs:.1f}%, waiting {waited / recvs:.1f} us")
    for k in ("rounds", "enters"):
        a, b = hist(after.get(f"io_uring_reply_after_{k}")), hist(before.get(f"io_uring_reply_after_{k}"))
        d = [x - y for x, y in zip(a, b)]
        n = max(sum(d), 1)
        parts.append(f"reply after {k} 0/1/2/3+: " + "/".join(f"{100 * x / n:.1f}%" for x in d))
    return f"per receive ({recvs} receives): " + ", ".join(parts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--conns", default="10,50")
    ap.add_argument("--points", default="50,80,90", help="percent of Redis's closed-loop maximum")
    ap.add_argument("--duration", type=float, default=5)
    ap.add_argument("--max", type=float, help="the 100%% rate (--sweep-max) instead of Redis's measured maximum")
    ap.add_argument("--keyspace", type=int, default=100000)
    ap.add_argument("--ratio", default="1:4", help="SET:GET")
    ap.add_argument("--server", default=os.path.join(ROOT, "src", "redis-like-server"))
    ap.add_argument("--valkey", help="a valkey-server binary (built outside the tree)")
    ap.add_argument("--variant", action="append", default=[], metavar="LABEL=BINARY[,ARG...]")
    ap.add_argument("--no-epoll", action="store_true")
    ap.add_argument("--out", default="/tmp/bench-latency", help="directory for the tool's JSON and PNG")
    ap.add_argument("--counters", action="store_true")
    ap.add_argument("--engine", default="auto", help="the tool's own engine (auto|uring|epoll)")
    ap.add_argument("--picture", help="one PNG with the curves of every connection count")
    ap.add_argument("--replot", action="store_true", help="only redraw --picture from the JSON in --out")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    conn_counts = [int(x) for x in a.conns.split(",")]
    if a.replot:
        return picture(a, conn_counts)

    specs = [("ours-io_uring", a.server, ["--io-engine", "io_uring"])]
    if not a.no_epoll:
        specs.append(("ours-epoll", a.server, ["--io-engine", "epoll"]))
    for v in a.variant:
        label, spec = v.split("=", 1)
        binary, *args = spec.split(",")
        specs.append((label, binary, args or ["--io-engine", "io_uring"]))
    specs.append(("redis", REDIS, []))
    if a.valkey:
        specs.append(("valkey", a.valkey, ["--appendonly", "no"]))
    servers = {name: benchlib.Server(binary, args, log=False, wait="pong", prefix="bench-lat-")
               for name, binary, args in specs}
    try:
        print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        for name, s in servers.items():
            subprocess.run([TOOL, "-p", str(s.port), "-q", "-t", "set", "-n", str(2 * a.keyspace), "-r",
                            str(a.keyspace), "-P", "32"], capture_output=True, check=True)
        for conns in conn_counts:
            base = f"{a.out}/sweep-c{conns}"
            before = {n: info(s.port) for n, s in servers.items()}
            cmd = [TOOL, "--latency-sweep", "--ratio", a.ratio, "-r", str(a.keyspace), "-c", str(conns),
                   "--duration", str(a.duration), "--sweep-points", a.points, "--sweep-runs", str(a.runs),
                   "--sweep-base", "redis", "--engine", a.engine, "--json", base + ".json", "--plot", base + ".png"]
            if a.max:
                cmd += ["--sweep-max", str(a.max)]
            for n, s in servers.items():
                cmd += ["--target", f"{n}={s.port}"]
            print("\n$ " + " ".join(cmd), flush=True)
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print(r.stdout[-3000:], r.stderr, file=sys.stderr)
                return 1
            after = {n: info(s.port) for n, s in servers.items()}
            report(json.load(open(base + ".json")), conns, a)
            print(f"\nload average after: {os.getloadavg()[0]:.1f}; JSON and PNG: {base}.json, {base}.png")
            if a.counters:
                for n in servers:
                    if "io_uring_rounds" in after[n]:
                        print(f"  {n}: " + counters_line(before[n], after[n]))
    finally:
        for s in servers.values():
            s.stop()
    return picture(a, conn_counts) if a.picture else 0


def gp_quote(text):
    return "'" + text.replace("'", "''") + "'"


def picture(a, conn_counts):
    """Every connection count's sweep (its JSON in --out) as a row of three
    panels in one PNG, drawn by gnuplot."""
    docs = [(c, json.load(open(f"{a.out}/sweep-c{c}.json"))) for c in conn_counts]
    script = []
    for c, doc in docs:
        for i, t in enumerate(doc["targets"]):
            rows = [p["median"] for p in t["points"] if 2 * p["sustained_runs"] > len(p["runs"])]
            script.append(f"$c{c}t{i} << EOD")
            script += [f"{m['achieved']:.1f} {m['p50_ms']:.6f} {m['p99_ms']:.6f} {m['p99.9_ms']:.6f}" for m in rows]
            script += (["NaN NaN NaN NaN"] if not rows else []) + ["EOD"]
    script += [f"set terminal png noenhanced size 1500,{470 * len(docs) + 60}",
               f"set output {gp_quote(a.picture)}",
               f"set multiplot layout {len(docs)},3 title "
               + gp_quote("open-loop latency against throughput, SET:GET " + a.ratio + ", random keys over "
                          + str(a.keyspace) + " (medians over rotating runs; sustained points only)"),
               "set logscale y", "set grid", "set key below horizontal maxrows 1 spacing 1.5", "set xlabel 'achieved requests/s'",
               "set ylabel 'latency (ms)'", "set format x '%.0s%c'"]
    for c, doc in docs:
        for col, label in ((2, "p50"), (3, "p99"), (4, "p99.9")):
            script.append(f"set title {gp_quote(f'{c} connections, {label}')}")
            script.append("plot " + ", ".join(
                f"$c{c}t{i} using 1:{col} with linespoints lw 2 pt 7 title {gp_quote(t['name'])}"
                for i, t in enumerate(doc["targets"])))
    script.append("unset multiplot")
    r = subprocess.run(["gnuplot"], input="\n".join(script) + "\n", text=True, capture_output=True)
    if r.returncode != 0:
        print(r.stderr, file=sys.stderr)
        return 1
    print(f"picture: {a.picture}")
    return 0


def report(doc, conns, a):
    targets = {t["name"]: t for t in doc["targets"]}
    ref = targets["redis"]
    print(f"\n### {conns} connections, SET:GET {a.ratio}, -r {a.keyspace}, open loop, {a.duration:g} s per point, "
          f"medians of {doc['config']['runs']} rotating runs; 100% = "
          + (f"Redis's closed-loop maximum {doc['max_rps']:,.0f} req/s\n" if doc["base"] == "redis"
             else f"{doc['max_rps']:,.0f} req/s (--max)\n"))
    if targets["redis"]["closed_loop"]:
        print("closed-loop maxima (-P 1, medians): " + ", ".join(
            f"{n} {t['closed_loop']['median']['achieved']:,.0f}" for n, t in targets.items()))
    print("\n| load | server | req/s (sustained runs) | p50 ms | p99 ms | p99.9 ms | p50 / Redis | p99 / Redis "
          "| server CPU us/req |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for i, p in enumerate(ref["points"]):
        rm = p["median"]
        for n, t in targets.items():
            q = t["points"][i]
            m = q["median"]
            cpu = m.get("server_cpu_us_per_request")
            print(f"| {p['percent']:g}% ({p['rate']:,.0f}/s) | {n} | {m['achieved']:,.0f} ({q['sustained_runs']}/"
                  f"{len(q['runs'])}) | {m['p50_ms']:.3f} | {m['p99_ms']:.3f} | {m['p99.9_ms']:.3f} | "
                  f"{m['p50_ms'] / rm['p50_ms']:.2f} | {m['p99_ms'] / rm['p99_ms']:.2f} | "
                  f"{'' if cpu is None else f'{cpu:.2f}'} |")
    print("\nper-run p50 ms: " + "; ".join(
        f"{n} {p['percent']:g}%: " + " ".join(f"{r['p50_ms']:.3f}" for r in p["runs"])
        for n, t in targets.items() for p in t["points"]))
    print("per-run p99 ms: " + "; ".join(
        f"{n} {p['percent']:g}%: " + " ".join(f"{r['p99_ms']:.2f}" for r in p["runs"])
        for n, t in targets.items() for p in t["points"]))


if __name__ == "__main__":
    sys.exit(main())
