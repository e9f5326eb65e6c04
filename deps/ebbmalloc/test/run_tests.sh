#!/bin/sh
# run_tests.sh: every ebbmalloc test, run by `make test` from deps/ebbmalloc.
# Each step prints its own "name: N passed, N failed" line; this script
# adds them up and ends with the plain "N passed, N failed" line, exiting
# non-zero if anything failed.
cd "$(dirname "$0")/.." || exit 1
SO="$PWD/libebbmalloc.so"
PY=/usr/bin/python3
LOG=build/test.log
: > "$LOG"

run() {
    echo "== $*"
    "$@" 2>&1 | tee -a "$LOG"
}

run build/test_api
run build/test_stress_static
run build/test_stress_debug
run env LD_PRELOAD="$SO" build/test_stress_libc
run env LD_PRELOAD="$SO" build/test_override
run env LD_PRELOAD="$SO" build/test_override_cxx
run build/test_purge bg
run build/test_purge maintain
run build/test_purge pressure
run build/test_purge borrow
echo "== python pytest suite under LD_PRELOAD"
LD_PRELOAD="$SO" $PY -m pytest -q -p no:cacheprovider test/dropin_py_test.py > build/pytest.out 2>&1
rc=$?
cat build/pytest.out
np=$(grep -oE '[0-9]+ passed' build/pytest.out | grep -oE '[0-9]+' | tail -1)
nf=$(grep -oE '[0-9]+ (failed|error)' build/pytest.out | grep -oE '[0-9]+' | tail -1)
[ -z "$np" ] && np=0; [ -z "$nf" ] && nf=0
[ $rc -ne 0 ] && [ "$nf" = 0 ] && nf=1
echo "ebbmalloc drop-in python: $np passed, $nf failed" | tee -a "$LOG"
run $PY test/dropin_redis.py "$SO"

passed=0; failed=0
for n in $(grep -oE '[0-9]+ passed, [0-9]+ failed' "$LOG" | awk '{print $1 ":" $3}'); do
    passed=$((passed + ${n%%:*})); failed=$((failed + ${n##*:}))
done
steps=$(grep -cE '[0-9]+ passed, [0-9]+ failed' "$LOG")
if [ "$steps" -ne 12 ]; then
    echo "expected 12 result lines, saw $steps"; failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
