#!/usr/bin/env bash
# install-deps.sh: make sure the Debian packages redis-like needs are present.
#
# Usage: install-deps.sh [build|test] [extra-package ...]
#   build  what `make` needs: compiler, libevent, the allocators' libraries
#          (so any MALLOC= choice builds); `make` and `make run` use this
#   test   build + what the tests and tools need (Debian's redis-server for
#          differential tests, pytest, redis-py, twemproxy, clang, valgrind,
#          gnuplot...); `make test`, `make fuzz`, `make shootout` use this
#   (no profile means test, the superset)
# It asks dpkg which packages are missing and runs `apt-get install -y` only
# for those, so on a machine that already has everything it costs one dpkg
# query, needs no root and never touches the network.
set -euo pipefail

build=(build-essential pkg-config libevent-dev libjemalloc-dev
       libgoogle-perftools-dev liburing-dev
       curl patch)   # utils/dev/fetch-lua.sh: Debian's lua5.1 source, our patches
test=(libmimalloc-dev redis-server redis-tools
      redis-sentinel    # Sentinel managing our replicas (test_repl_sentinel.py)
      python3-pytest python3-redis
      nutcracker        # twemproxy, for utils/tools/cluster-up and test_twemproxy.py
      clang libclang-rt-14-dev valgrind   # make fuzz, test_valgrind.py
      clang-format                        # make format-check (CI)
      gnuplot-nox                         # plots of the allocator shootout (also in make test)
      strace)                             # counts a child's fsyncs (test_fsync_policy.py)

profile=test
case "${1:-}" in
    build|test) profile=$1; shift ;;
esac
base=("${build[@]}")
[ "$profile" = test ] && base+=("${test[@]}")

missing=()
for pkg in "${base[@]}" "$@"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages and not root; run as root: apt-get install -y ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# An old or empty package list cannot find anything: refresh it once first.
apt-get update -qq >&2
# Debian's redis-server package starts a system service on :6379 when it is
# installed; policy-rc.d 101 keeps it from starting so our tests own the port.
policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod +x "$policy"; made_policy=1
fi
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 || { [ $made_policy = 1 ] && rm -f "$policy"; exit 1; }
[ $made_policy = 1 ] && rm -f "$policy"
exit 0
