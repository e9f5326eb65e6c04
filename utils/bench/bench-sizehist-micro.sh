#!/bin/sh
# bench-sizehist-micro.sh [ROUNDS]: zmalloc+zfree pairs with and without the
# size histogram (utils/bench/bench-sizehist-micro.c) on the default allocator
# (ebbmalloc), built in build/sizehist-micro/, run alternately; prints every
# run and the medians in ns per pair.
set -e
ROUNDS=${1:-9}
cd "$(dirname "$0")/../.."
OUT=build/sizehist-micro
mkdir -p "$OUT"
make -s -C deps/ebbmalloc libebbmalloc.a
for v in with without; do
    FLAG=; [ $v = without ] && FLAG=-DRL_NO_SIZEHIST
    cc -std=gnu11 -O2 -D_GNU_SOURCE -DUSE_EBBMALLOC $FLAG -Ilib -Ideps/ebbmalloc/include \
       utils/bench/bench-sizehist-micro.c lib/zmalloc.c lib/sizehist.c deps/ebbmalloc/libebbmalloc.a \
       -pthread -o "$OUT/micro-$v"
done
: > "$OUT/runs"
i=0
while [ $i -lt "$ROUNDS" ]; do
    for v in with without; do echo "$v $("$OUT/micro-$v")" >> "$OUT/runs"; done
    i=$((i + 1))
done
cat "$OUT/runs"
for v in without with; do
    printf '%s histogram: median %s ns per pair\n' "$v" \
        "$(grep "^$v " "$OUT/runs" | cut -d' ' -f2 | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
done
