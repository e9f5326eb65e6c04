#!/usr/bin/python3
"""ebbmalloc-reference-bench.py: the allocator field's reference programs
(mimalloc-bench's larson, xmalloc-test, rptest, cfrac, espresso, alloc-test,
glibc-simple, glibc-thread, mstress) run under every allocator by LD_PRELOAD.

The programs are never vendored: the caller passes a checkout (or export) of
mimalloc-bench, this script compiles the nine programs with gcc/g++ -O2 into
a build directory outside the repository and runs each with the arguments of
mimalloc-bench's bench.sh, thread count substituted for $procs.  Every round
runs all allocators one after the other, in an order rotated each round, so
a burst of load from the rest of a shared machine hits them all alike; the
table gives medians over the rounds and each allocator's ratio to the best
of the others (>1 means ebbmalloc is better), by the program's own figure
and by work per CPU second (its figure over the CPU it used, or CPU
seconds), which a loaded machine disturbs less.

    make -C deps/ebbmalloc bench-reference REF=/tmp/mimalloc-bench
    utils/bench/ebbmalloc-reference-bench.py --ref /tmp/mimalloc-bench \
        --runs 5 --threads 2,4,8 [--programs larson,xmalloc-test] [--csv out]

Wall, CPU seconds and peak RSS come from /usr/bin/time, as in bench.sh.
After the table: each allocator's spread (worst run over the median), the
programs' own memory figures, and each allocator's start-up peak RSS.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

LIBDIR = "/usr/lib/x86_64-linux-gnu"
HERE = os.path.dirname(os.path.abspath(__file__))
EBB_SO = os.path.join(HERE, "..", "..", "deps", "ebbmalloc", "libebbmalloc.so")

ALLOCATORS = [
    ("glibc", ""),
    ("jemalloc", LIBDIR + "/libjemalloc.so.2"),
    ("tcmalloc", LIBDIR + "/libtcmalloc_minimal.so.4"),
    ("mimalloc", LIBDIR + "/libmimalloc.so.2"),
    ("ebbmalloc", EBB_SO),
]

CFRAC_SRC = """cfrac.c pops.c pconst.c pio.c pabs.c pneg.c pcmp.c podd.c phalf.c
padd.c psub.c pmul.c pdivmod.c psqrt.c ppowmod.c atop.c ptoa.c itop.c utop.c
ptou.c errorp.c pfloat.c pidiv.c pimod.c picmp.c primes.c pcfrac.c
pgcd.c""".split()
ESPRESSO_SRC = """cofactor.c cols.c compl.c contain.c cubestr.c cvrin.c cvrm.c
cvrmisc.c cvrout.c dominate.c equiv.c espresso.c essen.c exact.c expand.c
gasp.c getopt.c gimpel.c globals.c hack.c indep.c irred.c main.c map.c
matrix.c mincov.c opo.c pair.c part.c primes.c reduce.c rows.c set.c setc.c
sharp.c sminterf.c solution.c sparse.c unate.c utility.c verify.c""".split()
OLD_C = ["-w", "-std=gnu89", "-Wno-implicit-function-declaration",
         "-Wno-implicit-int", "-Wno-int-conversion",
         "-Wno-incompatible-pointer-types"]

# name -> (compiler, flags, sources relative to bench/, libs)
BUILDS = {
    "cfrac": ("gcc", OLD_C + ["-DNOMEMOPT=1"],
              ["cfrac/" + s for s in CFRAC_SRC], ["-lm"]),
    "espresso": ("gcc", OLD_C, ["espresso/" + s for s in ESPRESSO_SRC], ["-lm"]),
    "larson": ("g++", ["-w", "-DCPP=1"], ["larson/larson.cpp"], ["-lpthread"]),
    "alloc-test": ("g++", ["-w", "-std=c++17", "-DBENCH=4"],
                   ["alloc-test/test_common.cpp",
                    "alloc-test/allocator_tester.cpp"], ["-lpthread"]),
    "xmalloc-test": ("gcc", ["-w"], ["xmalloc-test/xmalloc-test.c"],
                     ["-lpthread"]),
    "mstress": ("gcc", ["-w"], ["mstress/mstress.c"], ["-lpthread"]),
    "rptest": ("gcc", ["-w", "-Ibench/rptest"],
               ["rptest/rptest.c", "rptest/thread.c", "rptest/timer.c"],
               ["-lpthread", "-lm"]),
    "glibc-simple": ("gcc", ["-w"], ["glibc-bench/bench-malloc-simple.c"],
                     ["-lpthread"]),
    "glibc-thread": ("gcc", ["-w"], ["glibc-bench/bench-malloc-thread.c"],
                     ["-lpthread"]),
}


def metric_rate(regex, scale):
    def get(out, wall, cpu):
        m = re.search(regex, out)
        return float(m.group(1)) * scale if m else None
    return get


def metric_wall(out, wall, cpu):
    return wall


def metric_cpu(out, wall, cpu):
    """Single-threaded programs: user+sys seconds, which a shared machine's
    other jobs disturb far less than the wall clock."""
    return cpu


# A program run: (binary, args with {p} for the thread count, threaded?,
# metric, unit, higher_is_better, cwd-relative input file or None)
PROGRAMS = [
    ("larson", "larson", "5 8 1000 5000 100 4141 {p}", True,
     metric_rate(r"Throughput =\s*([0-9.]+)", 1e-6), "M ops/s", True),
    ("xmalloc-test", "xmalloc-test", "-w {p} -t 5 -s 64", True,
     metric_rate(r"free/sec: ([0-9.]+) M", 1.0), "M frees/s", True),
    ("rptest", "rptest", "{p} 0 1 2 500 1000 100 8 16000", True,
     metric_rate(r"([0-9]+) memory ops/CPU second", 1e-6),
     "M ops/CPU-s", True),
    ("glibc-thread", "glibc-thread", "{p}", True,
     metric_rate(r"([0-9]+) iterations", 1e-6), "M iterations", True),
    ("mstress", "mstress", "{p} 50 25", True, metric_wall, "s", False),
    ("alloc-testN", "alloc-test", "{p}", True, metric_wall, "s", False),
    ("cfrac", "cfrac", "17545186520507317056371138836327483792789528", False,
     metric_cpu, "CPU s", False),
    ("espresso", "espresso", "{ref}/bench/espresso/largest.espresso", False,
     metric_cpu, "CPU s", False),
    ("alloc-test1", "alloc-test", "1", False, metric_cpu, "CPU s", False),
    ("glibc-simple", "glibc-simple", "", False, metric_cpu, "CPU s", False),
]


# Programs that report their own memory figure: rptest samples the bytes it
# has allocated and the process's RSS together and prints the sample with
# the most of either ("<live>MiB -> <rss>MiB bytes sample, <n>% overhead").
# How much it holds live depends on the allocator's speed (its threads
# queue batches of blocks for each other to free, and a faster thread
# queues more before the others run), so the peak RSS of two allocators
# compares different amounts of live memory; the overhead does not.
SELF_MEMORY = {
    "rptest": re.compile(r"([0-9]+)MiB -> ([0-9]+)MiB bytes sample, "
                         r"([0-9]+)% overhead"),
}


def self_memory(name, out):
    """(live MiB, overhead %) as the program reports them, or None."""
    rx = SELF_MEMORY.get(name)
    m = rx.search(out) if rx else None
    return (int(m.group(1)), int(m.group(3))) if m else None


def print_self_memory(cases, allocs, mem):
    """Medians of the programs' own memory figures, by allocator."""
    rows = [(prog[0], t) for prog, t in cases
            if any((prog[0], t, an) in mem for an, _ in allocs)]
    if not rows:
        return
    print("\nThe programs' own memory figure, median (live MiB in its sample"
          " with the most; RSS over that, % overhead):\n")
    print("| program | thr | " + " | ".join(n for n, _ in allocs) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in allocs) + " |")
    for name, t in rows:
        cells = []
        for an, _ in allocs:
            vs = mem.get((name, t, an), [])
            cells.append("%.0f; %.0f%%" % (
                statistics.median(v[0] for v in vs),
                statistics.median(v[1] for v in vs)) if vs else "-")
        print("| %s | %d | %s |" % (name, t, " | ".join(cells)))


def build(ref, out):
    os.makedirs(out, exist_ok=True)
    for name, (cc, flags, srcs, libs) in BUILDS.items():
        exe = os.path.join(out, name)
        paths = [os.path.join(ref, "bench", s) for s in srcs]
        if os.path.exists(exe) and all(
                os.path.getmtime(p) <= os.path.getmtime(exe) for p in paths):
            continue
        flags = [f.replace("-Ibench/", "-I" + ref + "/bench/") for f in flags]
        cmd = [cc, "-O2"] + flags + ["-o", exe] + paths + libs
        print("build:", name, file=sys.stderr)
        subprocess.run(cmd, check=True)


def run_child(exe, args, lib, timeout):
    """One run under /usr/bin/time (as bench.sh does: a child forked from
    this Python process would report Python's RSS as its peak).  Returns
    (output, wall s, cpu s, peak RSS KiB, exit code)."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if lib:
        env["LD_PRELOAD"] = lib
    tf = os.path.join(os.path.dirname(exe), ".time-%d" % os.getpid())
    cmd = ["/usr/bin/time", "-o", tf, "-f", "%e %U %S %M", exe] + args
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, env=env,
                           cwd=os.path.dirname(exe), timeout=timeout)
        out, rc = p.stdout.decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode(errors="replace"), -9
    wall = cpu = 0.0
    rss = 0
    try:
        with open(tf) as f:
            last = f.read().strip().splitlines()[-1].split()
        wall, cpu = float(last[0]), float(last[1]) + float(last[2])
        rss = int(last[3])
    except (OSError, IndexError, ValueError):
        rc = rc or -1
    return out, wall, cpu, rss, rc


# A program that does nothing but one malloc and free: its peak RSS under
# each allocator is what that allocator costs any process before the
# program's own work (the library's code and data pages, what its start-up
# touches).  glibc's malloc lives in libc, which every program maps anyway,
# so on the small programs part of every other allocator's gap to glibc is
# this fixed cost, not the heap.
STARTUP_SRC = """#include <stdlib.h>
#include <string.h>
int main(void) {
    char *p = malloc(100);
    memset(p, 1, 100);
    free(p);
    return 0;
}
"""


def build_startup(out):
    exe = os.path.join(out, "startup")
    src = exe + ".c"
    with open(src, "w") as f:
        f.write(STARTUP_SRC)
    subprocess.run(["gcc", "-O2", "-o", exe, src], check=True)
    return exe


def print_startup(exe, allocs, runs, timeout):
    """Median peak RSS of the start-up program per allocator (runs rounds,
    allocators alternated: file-backed pages vary with the page cache)."""
    rss = {an: [] for an, _ in allocs}
    for _ in range(runs):
        for an, lib in allocs:
            _, _, _, r, rc = run_child(exe, [], lib, timeout)
            if rc == 0:
                rss[an].append(r)
    print("\nStart-up peak RSS, KiB (a program that mallocs and frees one"
          " block; median of %d):\n" % runs)
    print("| " + " | ".join(n for n, _ in allocs) + " |")
    print("| " + " | ".join("---:" for _ in allocs) + " |")
    print("| " + " | ".join("%d" % statistics.median(rss[n]) if rss[n]
                            else "-" for n, _ in allocs) + " |")


def fmt(v):
    if v is None:
        return "-"
    return "%.3f" % v if v < 10 else "%.1f" % v


def spread(vals, higher):
    """The worst run over the median (1.0: no spread): issue 23's "no run
    below 0.8x the median".  For times (lower is better) median / slowest."""
    if not vals:
        return None
    med = statistics.median(vals)
    worst = min(vals) if higher else max(vals)
    if med <= 0 or worst <= 0:
        return None
    return worst / med if higher else med / worst


def print_spread(cases, allocs, results):
    """Per allocator, the worst run against its median, by the program's
    figure and by work per CPU second, from the same rounds: whether a
    slow run is the allocator's or the machine's (every allocator's runs
    then spread alike, and the per-CPU figure less)."""
    print("\nSpread, worst run / median (figure; per CPU second):\n")
    print("| program | thr | " + " | ".join(n for n, _ in allocs) +
          " | n runs |")
    print("| --- | ---: | " + " | ".join("---:" for _ in allocs) + " | ---: |")
    for prog, t in cases:
        name, _, _, _, _, unit, higher = prog
        cells, n = [], 0
        for an, _ in allocs:
            rs = [(v, c) for v, c, _ in results.get((name, t, an), [])
                  if v is not None]
            n = max(n, len(rs))
            raw = spread([v for v, _ in rs], higher)
            if "CPU" in unit:
                eff = raw
            elif higher:
                eff = spread([v / c for v, c in rs if c > 0], True)
            else:
                eff = spread([c for _, c in rs], False)
            cells.append("%s; %s" % (fmt(raw), fmt(eff)))
        if n == 0:
            continue
        print("| %s | %d | %s | %d |" % (name, t, " | ".join(cells), n))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ref", required=True,
                    help="path of a mimalloc-bench checkout or export")
    ap.add_argument("--build", default="/tmp/ebbmalloc-reference-build",
                    help="where the programs are compiled (outside the repo)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--first-round", type=int, default=0,
                    help="number of the first round (sets the rotation, "
                    "for runs split over several invocations)")
    ap.add_argument("--threads", default="2,4,8")
    ap.add_argument("--programs", default="",
                    help="comma list of program names (default: all)")
    ap.add_argument("--allocators", default="",
                    help="comma list (default: all found)")
    ap.add_argument("--extra", action="append", default=[],
                    help="NAME=/path/lib.so: one more allocator, e.g. an "
                    "older ebbmalloc build (names starting with ebbmalloc "
                    "are not counted among the others)")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--csv", default="", help="append every run here")
    ap.add_argument("--table-from", default="",
                    help="run nothing: print the table from a --csv file "
                    "(e.g. of an interrupted run)")
    a = ap.parse_args()
    ref = os.path.abspath(a.ref)
    if not os.path.isdir(os.path.join(ref, "bench", "larson")):
        sys.exit("%s: not a mimalloc-bench tree (no bench/larson)" % ref)
    if not a.table_from:
        build(ref, a.build)
    allocs = [(n, l) for n, l in ALLOCATORS if not l or os.path.exists(l)]
    for e in a.extra:   # a known name is replaced (e.g. a frozen copy)
        n, _, l = e.partition("=")
        allocs = [x for x in allocs if x[0] != n] + [(n, os.path.abspath(l))]
    if a.allocators:
        want = a.allocators.split(",")
        allocs = [x for x in allocs if x[0] in want]
    progs = [p for p in PROGRAMS
             if not a.programs or p[0] in a.programs.split(",")]
    threads = [int(t) for t in a.threads.split(",")]
    csv = open(a.csv, "a") if a.csv else None
    cases = []
    for prog in progs:
        for t in (threads if prog[3] else [1]):
            cases.append((prog, t))
    # results[(prog, t, alloc)] = list of (metric, cpu, rss)
    results = {}
    mem = {}  # (prog, t, alloc) -> list of self_memory() figures
    bad = []
    if a.table_from:
        with open(a.table_from) as f:
            for line in f:
                # an older file has no 9th and 10th fields
                fields = line.strip().split(",")
                name, t, an, _, v, _, cpu, rss = fields[:8]
                results.setdefault((name, int(t), an), []).append(
                    (None if v == "None" else float(v), float(cpu), int(rss)))
                if len(fields) >= 10 and fields[8]:
                    mem.setdefault((name, int(t), an), []).append(
                        (int(fields[8]), int(fields[9])))
        a.runs = 0
    for rnd in range(a.first_round, a.first_round + a.runs):
        for prog, t in cases:
            name, exe, args, _, metric, unit, _ = prog
            argv = args.format(p=t, ref=ref).split()
            k = rnd % len(allocs)
            for an, lib in allocs[k:] + allocs[:k]:
                out, wall, cpu, rss, rc = run_child(
                    os.path.join(a.build, exe), argv, lib, a.timeout)
                v = metric(out, wall, cpu) if rc == 0 else None
                if v is None:
                    bad.append("%s t=%d %s rc=%d: %s" %
                               (name, t, an, rc, out[-300:]))
                results.setdefault((name, t, an), []).append((v, cpu, rss))
                sm = self_memory(name, out) if rc == 0 else None
                if sm:
                    mem.setdefault((name, t, an), []).append(sm)
                line = "%s,%d,%s,%d,%s,%.3f,%.3f,%d,%s,%s" % (
                    name, t, an, rnd, v, wall, cpu, rss,
                    sm[0] if sm else "", sm[1] if sm else "")
                print("run:", line, file=sys.stderr, flush=True)
                if csv:
                    csv.write(line + "\n")
                    csv.flush()
    print("| program | thr | unit | " + " | ".join(n for n, _ in allocs) +
          " | ebb vs best other | best other | ebb vs best other per CPU-s"
          " | ebb RSS MiB | RSS vs smallest other | ebb CPU s | ebb runs |")
    print("| --- | ---: | --- | " + " | ".join("---:" for _ in allocs) +
          " | ---: | --- | ---: | ---: | ---: | ---: | --- |")
    for prog, t in cases:
        name, _, _, _, _, unit, higher = prog
        med, rss, cpu, eff = {}, {}, {}, {}
        for an, _ in allocs:
            rs = results.get((name, t, an), [])
            vals = [v for v, _, _ in rs if v is not None]
            med[an] = statistics.median(vals) if vals else None
            # work per CPU second: a rate divided by the CPU it took (the
            # same programs run about the same time), or CPU s for timed
            # programs; less sensitive to the machine's other load
            effs = [((v if "CPU" in unit else v / c) if higher else c)
                    for v, c, _ in rs if v is not None and c > 0]
            eff[an] = statistics.median(effs) if effs else None
            rss[an] = statistics.median([r for _, _, r in rs]) if rs else None
            cpu[an] = statistics.median([c for _, c, _ in rs]) if rs else None
        others = [n for n, _ in allocs
                  if not n.startswith("ebbmalloc") and med[n]]
        ratio, best, rss_ratio, eff_ratio = None, "-", None, None
        if others and med.get("ebbmalloc"):
            pick = max if higher else min
            bn = pick(others, key=lambda n: med[n])
            best = "%s %s" % (bn, fmt(med[bn]))
            ratio = (med["ebbmalloc"] / med[bn] if higher
                     else med[bn] / med["ebbmalloc"])
            small = min(rss[n] for n in others if rss[n])
            eo = [n for n in others if eff[n]]
            if eo and eff.get("ebbmalloc"):
                eff_ratio = (eff["ebbmalloc"] / max(eff[n] for n in eo)
                             if higher else
                             min(eff[n] for n in eo) / eff["ebbmalloc"])
            rss_ratio = rss["ebbmalloc"] / small
        ebb_runs = " ".join(fmt(v) for v, _, _ in
                            results.get((name, t, "ebbmalloc"), []))
        print("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, t, unit, " | ".join(fmt(med[n]) for n, _ in allocs),
            fmt(ratio), best, fmt(eff_ratio),
            fmt(rss.get("ebbmalloc", 0) / 1024 if rss.get("ebbmalloc") else None),
            fmt(rss_ratio), fmt(cpu.get("ebbmalloc")), ebb_runs))
    print_spread(cases, allocs, results)
    print_self_memory(cases, allocs, mem)
    if not a.table_from:
        print_startup(build_startup(a.build), allocs, 21, a.timeout)
    if bad:
        print("\nfailed or unparsed runs:")
        for b in bad:
            print("  " + b.replace("\n", " | "))
        sys.exit(1)


if __name__ == "__main__":
    main()
