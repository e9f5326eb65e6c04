#!/usr/bin/python3
"""make_seeds.py: (re)generate the seed corpora of the RDB and AOF fuzz
targets (tests/fuzz/corpus_rdb, tests/fuzz/corpus_aof) from real files.

Starts redis-like (and, for RDB, Debian's redis-server 7.0.15 when it is
installed) on a free loopback port in a temporary directory, stores small
datasets that reach every encoding the loaders know (strings raw/int/LZF,
listpack and hashtable hashes, intset/listpack/hashtable sets, listpack and
skiplist sorted sets, quicklists, streams with groups, expiries, several
databases, a function library), saves them with SAVE and BGREWRITEAOF
(and as an RDB preamble followed by a command log), and writes each file as a seed.  The
seeds are committed; rerun this only when a format changes:
    /usr/bin/python3 tests/fuzz/make_seeds.py
"""
import os
import shutil
import sys
import tempfile
import time

import redis

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "utils", "bench"))
import benchlib  # noqa: E402

OURS = benchlib.OURS
REF = shutil.which("redis-server")


def start(binary, workdir, extra=()):
    """(server, client): binary on a free loopback port with its files in
    workdir (utils/bench/benchlib.py), stopped by its pid."""
    srv = benchlib.Server(binary, extra, workdir=workdir, log=False, timeout=10)
    return srv, redis.Redis(port=srv.port)


# Each dataset is a list of commands; small ones keep seeds short, the
# "big" ones cross the listpack/intset limits into the other encodings.
DATASETS = {
    "strings": [["SET", "s", "hello"], ["SET", "i", "12345"], ["SET", "neg", "-7"],
                ["SET", "lzf", "a" * 300], ["SET", "ttl", "v", "PX", "99999999"]],
    "hash_small": [["HSET", "h", "f1", "v1", "f2", "2", "f3", "-3"]],
    "hash_big": [["HSET", "hb"] + [x for i in range(140) for x in ("f%d" % i, "v%d" % i)]],
    "set_int": [["SADD", "si", "1", "2", "300", "70000", "-5", "5000000000"]],
    "set_small": [["SADD", "ss", "a", "b", "c", "1"]],
    "set_big": [["SADD", "sb"] + ["m%d" % i for i in range(140)]],
    "zset_small": [["ZADD", "z", "1", "a", "2.5", "b", "-inf", "c", "inf", "d"]],
    "zset_big": [["ZADD", "zb"] + [x for i in range(140) for x in (str(i / 3), "m%d" % i)]],
    "list_small": [["RPUSH", "l", "a", "1", "bb", "-2"]],
    "list_big": [["RPUSH", "lb"] + ["e%d" % i + "x" * (i % 50) for i in range(600)]],
    "stream": [["XADD", "st", "1-1", "f", "v"], ["XADD", "st", "2-1", "f", "w", "g", "h"],
               ["XGROUP", "CREATE", "st", "grp", "0"], ["XREADGROUP", "GROUP", "grp", "alice", "COUNT", "1",
                                                         "STREAMS", "st", ">"],
               ["XDEL", "st", "2-1"]],
    # consumers whose active time differs from their seen time: type 21 (RDB 11)
    "stream21": [["XADD", "st", "1-1", "f", "v"], ["XADD", "st", "2-1", "f", "w"],
                 ["XGROUP", "CREATE", "st", "grp", "0"], ["XGROUP", "CREATECONSUMER", "st", "grp", "idle"],
                 ["XREADGROUP", "GROUP", "grp", "alice", "COUNT", "1", "STREAMS", "st", ">"]],
    "multidb": [["SET", "a", "0"], ["SELECT", "3"], ["SET", "b", "3"], ["HSET", "h3", "x", "y"]],
    "function": [["FUNCTION", "LOAD", "#!lua name=seedlib\nredis.register_function('f', function() return 1 end)"],
                 ["SET", "k", "v"]],
}


def fill(r, cmds):
    for c in cmds:
        r.execute_command(*c)


def make_rdb_seeds(binary, tag, outdir):
    for name, cmds in DATASETS.items():
        d = tempfile.mkdtemp(prefix="rl-seed-")
        srv, r = start(binary, d)
        try:
            fill(r, cmds)
            r.save()
        finally:
            srv.stop()
        shutil.copy(os.path.join(d, "dump.rdb"), os.path.join(outdir, "%s_%s.rdb" % (tag, name)))
        shutil.rmtree(d)


def aof_part(d, kind):
    """The last file of a kind ('b' base, 'i' incr) the AOF manifest names."""
    adir = os.path.join(d, "appendonlydir")
    with open(os.path.join(adir, "appendonly.aof.manifest")) as f:
        names = [w[1] for w in (line.split() for line in f) if len(w) >= 6 and w[5] == kind]
    with open(os.path.join(adir, names[-1]), "rb") as f:
        return f.read()


def make_aof_seeds(outdir, rdb_dir):
    for name, cmds in DATASETS.items():
        if name == "function":
            continue   # the AOF target has no scripting engine
        d = tempfile.mkdtemp(prefix="rl-seed-")
        srv, r = start(OURS, d, ["--appendonly", "yes", "--appendfsync", "always", "--aof-use-rdb-preamble", "no",
                                 "--aof-timestamp-enabled", "yes"])
        try:
            fill(r, cmds)
            # The log as the commands wrote it (an incr file, with its
            # timestamp annotations) ...
            log = aof_part(d, "i")
            open(os.path.join(outdir, "log_%s.aof" % name), "wb").write(log)
            # ... as the rewrite writes it ...
            r.bgrewriteaof()
            for _ in range(200):
                time.sleep(0.05)
                if r.info("persistence")["aof_rewrite_in_progress"] == 0:
                    break
            time.sleep(0.2)
            open(os.path.join(outdir, "rewrite_%s.aof" % name), "wb").write(aof_part(d, "b"))
        finally:
            srv.stop()
        shutil.rmtree(d)
        # ... and after an RDB preamble (Redis's aof-use-rdb-preamble layout).
        with open(os.path.join(rdb_dir, "ours_strings.rdb"), "rb") as f:
            open(os.path.join(outdir, "preamble_%s.aof" % name), "wb").write(f.read() + log)


def main():
    rdb_dir = os.path.join(ROOT, "tests", "fuzz", "corpus_rdb")
    aof_dir = os.path.join(ROOT, "tests", "fuzz", "corpus_aof")
    os.makedirs(rdb_dir, exist_ok=True)
    os.makedirs(aof_dir, exist_ok=True)
    make_rdb_seeds(OURS, "ours", rdb_dir)
    if REF:
        make_rdb_seeds(REF, "redis70", rdb_dir)
    make_aof_seeds(aof_dir, rdb_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
