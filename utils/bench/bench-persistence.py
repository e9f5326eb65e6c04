#!/usr/bin/python3
"""bench-persistence: RDB and AOF costs, redis-like-server against Debian's redis-server.

Part 1 (RDB, issue 7): writes one data set of --keys keys of mixed types
(strings, small and big hashes, lists, sets, sorted sets, some with TTLs) as
RESP to a file, then for each of --runs rounds starts both servers empty on
free 127.0.0.1 ports in their own temp dirs, feeds the file to each with
`redis-cli --pipe`, runs BGSAVE on each (one at a time) and measures it,
SIGKILLs both, restarts each alone on its dump and measures the load, checks
DBSIZE and the TTL count against the data set and compares a sample of keys
between the two reloaded servers.  The order of the servers alternates
between rounds.  Prints medians and ratios ours/redis as markdown.

Part 2 (AOF): four servers (each binary with appendonly no, and with
appendonly yes + appendfsync everysec), Debian's redis-benchmark
`-t set -n N -c 50 -r 100000 -q --csv` without pipelining and with -P 16,
interleaved, --runs rounds; prints median rps and the ratio everysec/no.

Part 3 (AOF rewrite and reload): for each binary and each base format
(aof-use-rdb-preamble yes: an RDB image, no: commands), a server with
appendonly yes takes the part 1 data set, runs BGREWRITEAOF (timed from the
command to aof_rewrite_in_progress:0), is SIGKILLed and restarts on its
appendonlydir (the load time its log reports, DBSIZE checked); --runs
rounds, medians and ratios ours/redis.

Used by hand for BENCHMARKS.md; every child process has a timeout and the
servers it started are killed by pid.

usage: utils/bench/bench-persistence.py [--runs 3] [--keys 1000000] [--requests 200000]
                                  [--server src/redis-like-server] [--skip-rdb] [--skip-aof]
                                  [--skip-rewrite]
"""
import argparse
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT, REDIS = benchlib.ROOT, benchlib.REDIS
LOADED = re.compile(r"DB loaded from disk: ([\d.]+) seconds")
AOF_LOADED = re.compile(r"DB loaded from append only file: ([\d.]+) seconds")
BGSAVE_PID = re.compile(r"Background saving started by pid (\d+)")


class Server:
    """One server process in its own directory, logging to dir/log; unlike
    benchlib.Server it restarts in the same directory (a reload after a
    kill), so it builds on benchlib's pieces rather than the class."""

    def __init__(self, name, binary, workdir, extra=()):
        self.name, self.binary, self.extra = name, binary, list(extra)
        self.dir = tempfile.mkdtemp(prefix=name + "-", dir=workdir)
        self.log = os.path.join(self.dir, "log")
        self.proc = None
        self.port = None

    def start(self, timeout=120.0):
        """Starts the server; returns seconds from spawn until PING answers PONG."""
        self.port = benchlib.free_port()
        own = ["--dbfilename", "dump.rdb", "--logfile", self.log, "--daemonize", "no"]
        if "appendonly" not in " ".join(self.extra):
            own += ["--appendonly", "no"]
        args = benchlib.server_command(self.binary, self.port, self.dir, own)
        open(self.log, "a").close()
        self.log_offset = os.path.getsize(self.log)
        t0 = time.monotonic()
        self.proc = subprocess.Popen(args + self.extra, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                sys.exit(f"{self.name} exited with {self.proc.returncode} at start-up; see {self.log}")
            if benchlib.pong_once(self.port):  # -LOADING until the file is in
                ready = time.monotonic() - t0
                self.r = redis.Redis(port=self.port, socket_timeout=60, decode_responses=False)
                return ready
            time.sleep(0.002)
        self.kill()
        sys.exit(f"{self.name} not ready within {timeout} s; see {self.log}")

    def new_log(self):
        with open(self.log, errors="replace") as f:
            f.seek(self.log_offset)
            return f.read()

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        if self.proc:
            self.proc.wait(timeout=30)
        self.proc = None

    def remove(self):
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


# ------------------------------------------------------------------ data set

resp = benchlib.resp


ALNUM = b"abcdefghijklmnopqrstuvwxyz0123456789"


def word(rng, lo, hi):
    return bytes(rng.choices(ALNUM, k=rng.randint(lo, hi)))


def string_value(rng):
    """3..100 bytes: a third integers, a third JSON-like text (LZF finds
    repeats in it), a third random letters and digits."""
    kind = rng.randrange(3)
    if kind == 0:
        return str(rng.randint(0, 10 ** rng.randint(1, 12))).encode().rjust(3, b"1")
    if kind == 1:
        v = b'{"id":%d,"name":"user%d","active":true,"tags":["a","b"]}' % (rng.randint(0, 999999), rng.randint(0, 999))
        return v[:rng.randint(3, 100)]
    return word(rng, 3, 100)


def small_type(rng, key):
    """One command creating a small key of a random type (string 60%, the
    four collections 10% each), in the compact encodings of both servers."""
    x = rng.random()
    if x < 0.6:
        return [resp(b"SET", key, string_value(rng))]
    n = rng.randint(1, 20)
    if x < 0.7:
        return [resp(b"HSET", key, *[v for f in range(rng.randint(1, 10)) for v in (b"f%d" % f, word(rng, 1, 20))])]
    if x < 0.8:
        return [resp(b"RPUSH", key, *[word(rng, 1, 20) for _ in range(n)])]
    if x < 0.9:
        return [resp(b"SADD", key, *[str(rng.randint(0, 1 << 40)) for _ in range(n)])]
    return [resp(b"ZADD", key, *[v for m in range(n) for v in (b"%.3f" % (rng.random() * 1000), b"m%d" % m)])]


def big_type(rng, key, kind):
    """Collections past the compact limits (hash/set/zset > 128 or 512
    entries, a list of many quicklist nodes, strings of 20-200 KB)."""
    if kind == 0:
        f = [v for i in range(2000) for v in (b"field:%d" % i, word(rng, 5, 40))]
        return [resp(b"HSET", key, *f[j:j + 200]) for j in range(0, len(f), 200)]
    if kind == 1:
        e = [word(rng, 5, 40) for _ in range(20000)]
        return [resp(b"RPUSH", key, *e[j:j + 200]) for j in range(0, len(e), 200)]
    if kind == 2:
        e = [str(rng.randint(0, 1 << 40)) for _ in range(2000)]
        return [resp(b"SADD", key, *e[j:j + 200]) for j in range(0, len(e), 200)]
    if kind == 3:
        e = [b"member:%d:" % i + word(rng, 1, 10) for i in range(2000)]
        return [resp(b"SADD", key, *e[j:j + 200]) for j in range(0, len(e), 200)]
    if kind == 4:
        e = [v for i in range(2000) for v in (b"%.3f" % (rng.random() * 1e6), b"m:%d" % i)]
        return [resp(b"ZADD", key, *e[j:j + 200]) for j in range(0, len(e), 200)]
    return [resp(b"SET", key, word(rng, 20000, 200000))]


def write_data_set(path, nkeys, seed=7):
    """Writes the RESP commands; returns (keys, keys with a TTL).  10% of
    keys get a TTL of 2..24 hours, far beyond the run, so none expire."""
    rng = random.Random(seed)
    nbig = min(60, nkeys // 100)
    big_at = set(rng.sample(range(nkeys), nbig))
    expires = 0
    with open(path, "wb") as f:
        buf = []
        kind = 0
        for i in range(nkeys):
            key = b"key:%08d" % i
            if i in big_at:
                buf += big_type(rng, key, kind % 6)
                kind += 1
            else:
                buf += small_type(rng, key)
            if rng.random() < 0.1:
                buf.append(resp(b"EXPIRE", key, rng.randint(7200, 86400)))
                expires += 1
            if len(buf) >= 20000:
                f.write(b"".join(buf))
                buf = []
        f.write(b"".join(buf))
    return nkeys, expires


def pipe_file(port, path, timeout):
    t0 = time.monotonic()
    with open(path, "rb") as f:
        out = subprocess.run(["redis-cli", "-p", str(port), "--pipe"], stdin=f, capture_output=True,
                             text=True, timeout=timeout).stdout
    m = re.search(r"errors: (\d+), replies: (\d+)", out)
    if not m or m.group(1) != "0":
        sys.exit(f"redis-cli --pipe into port {port} failed: {out[-300:]}")
    return time.monotonic() - t0


# ---------------------------------------------------------------------- RDB

def info(r, section):
    return r.info(section)


def vm_bytes(pid, field):
    """A /proc/<pid>/status size (VmHWM: the peak RSS, VmRSS) in bytes."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def proc_state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def bgsave(s, timeout):
    """BGSAVE, then polls every 2 ms.  Returns (wall seconds from the
    command to INFO's rdb_bgsave_in_progress:0, seconds the child ran until
    it exited (zombie, before the parent reaps it), latest_fork_usec)."""
    t0 = time.monotonic()
    s.r.bgsave()
    child, child_done = None, None
    while True:
        elapsed = time.monotonic() - t0
        if elapsed > timeout:
            sys.exit(f"{s.name}: BGSAVE still running after {timeout} s")
        if child is None:
            m = BGSAVE_PID.search(s.new_log())
            child = int(m.group(1)) if m else None
        if child is not None and child_done is None and proc_state(child) in ("Z", "X", "gone"):
            child_done = elapsed
        p = info(s.r, "persistence")
        if p["rdb_bgsave_in_progress"] == 0:
            wall = time.monotonic() - t0
            if p["rdb_last_bgsave_status"] != "ok":
                sys.exit(f"{s.name}: BGSAVE failed; see {s.log}")
            fork = info(s.r, "stats")["latest_fork_usec"]
            return wall, child_done if child_done is not None else wall, fork
        time.sleep(0.002)


def keyspace(r):
    db = r.info("keyspace").get("db0", {"keys": 0, "expires": 0})
    return db["keys"], db["expires"]


def value_of(r, key):
    t = r.type(key)
    if t == b"string":
        v = r.get(key)
    elif t == b"hash":
        v = sorted(r.hgetall(key).items())
    elif t == b"list":
        v = r.lrange(key, 0, -1)
    elif t == b"set":
        v = sorted(r.smembers(key))
    elif t == b"zset":
        v = r.zrange(key, 0, -1, withscores=True)
    else:
        v = None
    return t, v, r.ttl(key) > 0


def compare_sample(a, b, nkeys, n=500, seed=11):
    rng = random.Random(seed)
    for i in rng.sample(range(nkeys), min(n, nkeys)):
        key = b"key:%08d" % i
        va, vb = value_of(a.r, key), value_of(b.r, key)
        if va != vb:
            sys.exit(f"{key!r} differs after reload: {a.name} {va[0]} ttl={va[2]} vs {b.name} {vb[0]} ttl={vb[2]}")
    return min(n, nkeys)


def rdb_round(servers, data, expect, timeout):
    """One round: load, BGSAVE, kill, restart, verify.  Returns {name: dict}."""
    res = {}
    for s in servers:
        s.start()
        res[s.name] = {"pipe": pipe_file(s.port, data, timeout)}
        keys = keyspace(s.r)
        if keys != expect:
            sys.exit(f"{s.name}: after loading keys/expires {keys}, expected {expect}")
        res[s.name]["used_memory"] = info(s.r, "memory")["used_memory"]
    for s in servers:
        wall, child, fork = bgsave(s, timeout)
        res[s.name].update(bgsave=wall, child=child, fork_ms=fork / 1000.0,
                           size=os.path.getsize(os.path.join(s.dir, "dump.rdb")))
    for s in servers:
        s.kill()
    for s in servers:
        ready = s.start(timeout)
        m = LOADED.search(s.new_log())
        if not m:
            sys.exit(f"{s.name}: no 'DB loaded from disk' line in {s.log}")
        keys = keyspace(s.r)
        if keys != expect:
            sys.exit(f"{s.name}: after reload keys/expires {keys}, expected {expect}")
        res[s.name].update(load=float(m.group(1)), ready=ready, load_peak=vm_bytes(s.proc.pid, "VmHWM"),
                           load_rss=vm_bytes(s.proc.pid, "VmRSS"))
    res["sampled"] = compare_sample(servers[0], servers[1], expect[0])
    for s in servers:
        s.kill()
        os.unlink(os.path.join(s.dir, "dump.rdb"))
    return res


def rdb_part(a, workdir):
    data = os.path.join(workdir, "data.resp")
    t0 = time.monotonic()
    expect = write_data_set(data, a.keys)
    print(f"data set: {expect[0]:,} keys, {expect[1]:,} with a TTL, "
          f"{os.path.getsize(data) / 2**20:.0f} MiB of RESP, written in {time.monotonic() - t0:.0f} s",
          file=sys.stderr)
    ours = Server("ours", a.server, workdir)
    theirs = Server("redis", REDIS, workdir)
    rounds = []
    try:
        for i in range(a.runs):
            order = [ours, theirs] if i % 2 == 0 else [theirs, ours]
            rounds.append(rdb_round(order, data, expect, a.timeout))
            r = rounds[-1]
            print(f"round {i + 1}: " + "; ".join(
                f"{n} bgsave {r[n]['bgsave']:.3f}s load {r[n]['load']:.3f}s size {r[n]['size']:,}"
                for n in ("ours", "redis")), file=sys.stderr)
    finally:
        ours.remove()
        theirs.remove()
        os.unlink(data)
    rows = [
        ("BGSAVE, command to done (s)", "bgsave", "{:.3f}"),
        ("BGSAVE, child fork to exit (s)", "child", "{:.3f}"),
        ("fork (ms, latest_fork_usec)", "fork_ms", "{:.1f}"),
        ("RDB size (bytes)", "size", "{:,.0f}"),
        ("load, server's log line (s)", "load", "{:.3f}"),
        ("start-up to PONG (s)", "ready", "{:.3f}"),
        ("used_memory after loading (bytes)", "used_memory", "{:,.0f}"),
        ("peak RSS of the restarted server, load included (bytes)", "load_peak", "{:,.0f}"),
        ("RSS after the load (bytes)", "load_rss", "{:,.0f}"),
        ("redis-cli --pipe of the data set (s)", "pipe", "{:.1f}"),
    ]
    print(f"\n### RDB: {expect[0]:,} keys of mixed types, {expect[1]:,} with a TTL; medians of {a.runs} rounds\n")
    print("| measure | redis-like | redis 7.0.15 | ours/redis | per round (ours; redis) |")
    print("| --- | ---: | ---: | ---: | --- |")
    for label, k, fmt in rows:
        o = [r["ours"][k] for r in rounds]
        t = [r["redis"][k] for r in rounds]
        mo, mt = statistics.median(o), statistics.median(t)
        per = ", ".join(fmt.format(x) for x in o) + "; " + ", ".join(fmt.format(x) for x in t)
        print(f"| {label} | {fmt.format(mo)} | {fmt.format(mt)} | {mo / mt if mt else 0:.2f} | {per} |")
    print(f"\nEvery round: DBSIZE and expires equal to the data set's on both servers after the "
          f"load and after the reload; {rounds[0]['sampled']} sampled keys identical (type, value, TTL set) "
          f"between the two reloaded servers.")


# ---------------------------------------------------------------------- AOF

def run_benchmark(port, requests, pipeline, timeout):
    cmd = ["redis-benchmark", "-p", str(port), "-t", "set", "-n", str(requests), "-c", "50",
           "-r", "100000", "-q", "--csv"]
    if pipeline > 1:
        cmd += ["-P", str(pipeline)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout).stdout
    for line in out.splitlines():
        parts = [x.strip('"') for x in line.split(",")]
        if parts[0] == "SET":
            return float(parts[1]), float(parts[4]), float(parts[6])   # rps, p50, p99
    sys.exit(f"no SET line from redis-benchmark on port {port}: {out[-300:]}")


def aof_part(a, workdir):
    aof = ["--appendonly", "yes", "--appendfsync", "everysec", "--auto-aof-rewrite-percentage", "0"]
    servers = {}
    for binary, bname in ((a.server, "ours"), (REDIS, "redis")):
        servers[(bname, "no")] = Server(bname + "-noaof", binary, workdir, ["--appendonly", "no"])
        servers[(bname, "everysec")] = Server(bname + "-everysec", binary, workdir, aof)
    res = {(k, p): [] for k in servers for p in (1, 16)}
    try:
        for s in servers.values():
            s.start()
        for i in range(a.runs):
            for pipeline in (1, 16):
                for k, s in servers.items():
                    s.r.flushall()
                    res[(k, pipeline)].append(run_benchmark(s.port, a.requests, pipeline, a.timeout))
            print(f"aof round {i + 1} done", file=sys.stderr)
        for k, s in servers.items():
            if k[1] == "everysec":
                p = info(s.r, "persistence")
                if p.get("aof_enabled") != 1:
                    sys.exit(f"{s.name}: aof_enabled is not 1")
                print(f"{s.name}: aof_delayed_fsync {p.get('aof_delayed_fsync')}, "
                      f"aof_last_write_status {p.get('aof_last_write_status')}", file=sys.stderr)
    finally:
        for s in servers.values():
            s.remove()
    print(f"\n### AOF: redis-benchmark -t set -n {a.requests} -c 50 -r 100000; medians of {a.runs} rounds\n")
    print("| server | -P | rps, appendonly no | rps, everysec | everysec/no | p50 ms no / everysec "
          "| p99 ms no / everysec | rps per round (no; everysec) |")
    print("| --- | ---: | ---: | ---: | ---: | --- | --- | --- |")
    for bname in ("ours", "redis"):
        for pipeline in (1, 16):
            no, ev = res[((bname, "no"), pipeline)], res[((bname, "everysec"), pipeline)]
            med = lambda xs, j: statistics.median(x[j] for x in xs)
            per = ", ".join(f"{x[0]:.0f}" for x in no) + "; " + ", ".join(f"{x[0]:.0f}" for x in ev)
            label = "redis-like" if bname == "ours" else "redis 7.0.15"
            print(f"| {label} | {pipeline} | {med(no, 0):,.0f} | {med(ev, 0):,.0f} | "
                  f"{med(ev, 0) / med(no, 0):.2f} | {med(no, 1):.3f} / {med(ev, 1):.3f} | "
                  f"{med(no, 2):.3f} / {med(ev, 2):.3f} | {per} |")


def aofdir_bytes(s):
    d = os.path.join(s.dir, "appendonlydir")
    return sum(os.path.getsize(os.path.join(d, n)) for n in os.listdir(d) if not n.endswith(".manifest"))


def rewrite_round(s, data, expect, timeout):
    """Fill, BGREWRITEAOF, kill, reload: the figures of one server."""
    s.start()
    pipe_file(s.port, data, timeout)
    t0 = time.monotonic()
    s.r.bgrewriteaof()
    while True:
        p = info(s.r, "persistence")
        if p["aof_rewrites"] >= 1 and not p["aof_rewrite_in_progress"]:
            break
        if time.monotonic() - t0 > timeout:
            sys.exit(f"{s.name}: BGREWRITEAOF still running after {timeout} s")
        time.sleep(0.002)
    rewrite = time.monotonic() - t0
    if p["aof_last_bgrewrite_status"] != "ok":
        sys.exit(f"{s.name}: BGREWRITEAOF failed; see {s.log}")
    s.kill()
    size = aofdir_bytes(s)
    s.start(timeout)
    m = AOF_LOADED.search(s.new_log())
    if not m:
        sys.exit(f"{s.name}: no 'DB loaded from append only file' line in {s.log}")
    if keyspace(s.r) != expect:
        sys.exit(f"{s.name}: after the reload keys/expires {keyspace(s.r)}, expected {expect}")
    res = {"rewrite": rewrite, "size": size, "load": float(m.group(1))}
    s.kill()
    shutil.rmtree(os.path.join(s.dir, "appendonlydir"))
    return res


def rewrite_part(a, workdir):
    data = os.path.join(workdir, "data.resp")
    expect = write_data_set(data, a.keys)
    servers = {}
    for binary, bname in ((a.server, "ours"), (REDIS, "redis")):
        for preamble in ("yes", "no"):
            servers[(bname, preamble)] = Server(f"{bname}-preamble-{preamble}", binary, workdir,
                                                ["--appendonly", "yes", "--aof-use-rdb-preamble", preamble,
                                                 "--auto-aof-rewrite-percentage", "0"])
    res = {k: [] for k in servers}
    try:
        for i in range(a.runs):
            keys = list(servers) if i % 2 == 0 else list(reversed(servers))
            for k in keys:
                res[k].append(rewrite_round(servers[k], data, expect, a.timeout))
            print(f"rewrite round {i + 1} done", file=sys.stderr)
    finally:
        for s in servers.values():
            s.remove()
        os.unlink(data)
    print(f"\n### AOF rewrite and reload: {expect[0]:,} keys of mixed types; medians of {a.runs} rounds\n")
    print("| base format | measure | redis-like | redis 7.0.15 | ours/redis |")
    print("| --- | --- | ---: | ---: | ---: |")
    for preamble, label in (("yes", "RDB (aof-use-rdb-preamble yes)"), ("no", "commands (no)")):
        for k, what, fmt in (("rewrite", "BGREWRITEAOF, command to done (s)", "{:.3f}"),
                             ("size", "appendonlydir bytes", "{:,.0f}"),
                             ("load", "load, server's log line (s)", "{:.3f}")):
            o = statistics.median(r[k] for r in res[("ours", preamble)])
            t = statistics.median(r[k] for r in res[("redis", preamble)])
            print(f"| {label} | {what} | {fmt.format(o)} | {fmt.format(t)} | {o / t if t else 0:.2f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keys", type=int, default=1000000)
    ap.add_argument("--requests", type=int, default=200000)
    ap.add_argument("--server", default=os.path.join(ROOT, "src", "redis-like-server"))
    ap.add_argument("--timeout", type=float, default=600.0, help="bound for each step (pipe, BGSAVE, load, benchmark)")
    ap.add_argument("--workdir", default=None, help="parent of the temp dirs (default: $TMPDIR)")
    ap.add_argument("--skip-rdb", action="store_true")
    ap.add_argument("--skip-aof", action="store_true")
    ap.add_argument("--skip-rewrite", action="store_true")
    a = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="bench-persistence-", dir=a.workdir)
    try:
        print(f"server {a.server}; work dir {workdir}", file=sys.stderr)
        if not a.skip_rdb:
            rdb_part(a, workdir)
        if not a.skip_aof:
            aof_part(a, workdir)
        if not a.skip_rewrite:
            rewrite_part(a, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
