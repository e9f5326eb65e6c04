#!/bin/sh
# run_bench.sh: build/bench under each allocator via LD_PRELOAD, same run.
# Allocators missing on the machine are skipped.
cd "$(dirname "$0")/.." || exit 1
for a in glibc: \
         jemalloc:/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 \
         tcmalloc_minimal:/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 \
         mimalloc:/usr/lib/x86_64-linux-gnu/libmimalloc.so.2 \
         ebbmalloc:$PWD/libebbmalloc.so; do
    name=${a%%:*}; lib=${a#*:}
    if [ -n "$lib" ] && [ ! -f "$lib" ]; then echo "== $name: missing $lib"; continue; fi
    for b in pair xthread larson; do
        printf '%-17s ' "$name"
        LD_PRELOAD=$lib build/bench $b | tr '\n' ' '
        echo
    done
done
