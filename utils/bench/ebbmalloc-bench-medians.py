#!/usr/bin/python3
"""ebbmalloc-bench-medians.py: medians of several `make -C deps/ebbmalloc
bench` runs (deps/ebbmalloc/test/run_bench.sh output, concatenated on
stdin), as a markdown table with ebbmalloc's ratios to each allocator.

  for i in 1 2 3 4 5; do make -s -C deps/ebbmalloc bench; done > bench.log
  utils/bench/ebbmalloc-bench-medians.py < bench.log

Lines look like "jemalloc          pair: 6.10 ns per malloc+free peak_rss: 1 kB".
Time is ns per pair for `pair` (lower is better), M frees/s for `xthread`
and M ops/s for `larson` (higher is better); time ratios are expressed as
ebbmalloc's time over the other's (< 1 means ebbmalloc is faster)."""
import re
import statistics
import sys

LINE = re.compile(r"^(\S+)\s+(pair|xthread|larson): ([0-9.]+) .*?peak_rss:\s*([0-9]+) kB")
BENCHES = (("pair", "ns/pair"), ("xthread", "M frees/s"), ("larson", "M ops/s"))


def main():
    runs = {}
    for line in sys.stdin:
        m = LINE.match(line.strip())
        if m:
            runs.setdefault((m[1], m[2]), []).append((float(m[3]), int(m[4])))
    allocs = []
    for (a, _b) in runs:
        if a not in allocs:
            allocs.append(a)
    print("| bench | allocator | runs | median | per run | peak RSS KiB (median) | ebbmalloc time ratio | "
          "ebbmalloc peak RSS ratio |")
    print("| --- | --- | ---: | ---: | --- | ---: | ---: | ---: |")
    for bench, unit in BENCHES:
        med = {}
        for a in allocs:
            vals = runs.get((a, bench), [])
            if vals:
                med[a] = (statistics.median(v for v, _ in vals), statistics.median(r for _, r in vals), vals)
        ebb = med.get("ebbmalloc")
        for a, (v, rss, vals) in med.items():
            if ebb:
                # time ratio: ebbmalloc's time / other's time
                t = ebb[0] / v if bench == "pair" else v / ebb[0]
                tr, rr = f"{t:.2f}", f"{ebb[1] / rss:.2f}"
            else:
                tr = rr = ""
            per = ", ".join(f"{x:g}" for x, _ in vals)
            print(f"| {bench} ({unit}) | {a} | {len(vals)} | {v:g} | {per} | {rss} | {tr} | {rr} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
