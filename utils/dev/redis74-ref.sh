#!/bin/sh
# redis74-ref.sh: print the path of a Redis 7.4.1 redis-server built outside
# the tree, building it first when it is missing (cached in REF_DIR).
#
# The differential tests against Redis 7.4 (tests/integration/*_74.py) call
# this script; so does utils/dev/gen-74-transcripts.py, which records 7.4.1's
# replies as transcripts that `make test` compares ours with when no 7.4.1
# can be built.  The source is a git snapshot of the redis repository
# (REDIS_GIT, default the mirror the fetch tool leaves in /work/.mirror); the
# tag 7.4.1 is exported with `git archive` into REF_DIR and built there.
# Nothing of it enters our tree.  Exit status 2 (and nothing on stdout) when
# no source can be had.
set -eu
REF_DIR=${REF_DIR:-/work/ref/redis-7.4}
REDIS_GIT=${REDIS_GIT:-/work/.mirror/redis+redis/repo}
TAG=${REDIS74_TAG:-7.4.1}
BIN="$REF_DIR/src/redis-server"
if [ -x "$BIN" ]; then
    echo "$BIN"
    exit 0
fi
if [ ! -d "$REDIS_GIT" ] || ! git --git-dir="$REDIS_GIT" rev-parse -q --verify "$TAG^{commit}" >/dev/null 2>&1; then
    echo "redis74-ref.sh: no redis source with tag $TAG at $REDIS_GIT" >&2
    exit 2
fi
LOCK="$REF_DIR.lock"
mkdir -p "$(dirname "$REF_DIR")"
exec 9>"$LOCK"
flock 9
if [ ! -x "$BIN" ]; then
    rm -rf "$REF_DIR.tmp"
    mkdir -p "$REF_DIR.tmp"
    git --git-dir="$REDIS_GIT" archive "$TAG" | tar -x -C "$REF_DIR.tmp"
    make -C "$REF_DIR.tmp" -j2 BUILD_TLS=no >"$(dirname "$REF_DIR")/redis74-build.log" 2>&1 || {
        echo "redis74-ref.sh: build failed, see $(dirname "$REF_DIR")/redis74-build.log" >&2
        exit 1
    }
    rm -rf "$REF_DIR"
    mv "$REF_DIR.tmp" "$REF_DIR"
fi
echo "$BIN"
