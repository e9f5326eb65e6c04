"""dropin_redis.py: Debian's /usr/bin/redis-server runs on ebbmalloc
(LD_PRELOAD=libebbmalloc.so) on a free loopback port; this script checks
that the library is mapped into the server, stores and reads back a few
thousand keys of mixed sizes through redis-py, deletes half, checks
counts and values, serves redis-benchmark, then stops the server with SHUTDOWN NOSAVE.  Prints
"name: N passed, N failed" like the C tests.  Usage: dropin_redis.py SO"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import redis


def free_port():
    # ebbmalloc stands alone (its README), so it keeps this copy of the
    # server tree's utils/bench/benchlib.py free_port rather than importing it.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    so = os.path.abspath(sys.argv[1])
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="ebb-redis-")
    env = dict(os.environ, LD_PRELOAD=so)
    proc = subprocess.Popen(
        ["/usr/bin/redis-server", "--port", str(port), "--bind", "127.0.0.1",
         "--save", "", "--appendonly", "no", "--dir", workdir,
         "--daemonize", "no", "--loglevel", "warning"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    passed = failed = 0
    try:
        r = redis.Redis(host="127.0.0.1", port=port, socket_timeout=10)
        for _ in range(100):
            try:
                r.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        checks = []
        maps = open(f"/proc/{proc.pid}/maps").read()
        checks.append(("libebbmalloc mapped in redis-server", so in maps))
        pipe = r.pipeline(transaction=False)
        for i in range(5000):
            pipe.set(f"k:{i}", (str(i) * (1 + i % 300)).encode())
        replies = pipe.execute()
        checks.append(("5000 SET replies OK", all(x is True for x in replies)))
        pipe = r.pipeline(transaction=False)
        for i in range(5000):
            pipe.get(f"k:{i}")
        got = pipe.execute()
        checks.append(("5000 GET values match",
                       all(got[i] == (str(i) * (1 + i % 300)).encode()
                           for i in range(5000))))
        r.delete(*[f"k:{i}" for i in range(0, 5000, 2)])
        checks.append(("DBSIZE after deleting half", r.dbsize() == 2500))
        r.rpush("list", *[str(i) for i in range(20000)])
        checks.append(("list of 20000", r.llen("list") == 20000 and
                       r.lindex("list", 12345) == b"12345"))
        bench = subprocess.run(
            ["/usr/bin/redis-benchmark", "-h", "127.0.0.1", "-p", str(port),
             "-n", "20000", "-c", "20", "-P", "8", "-q",
             "-t", "set,get,lpush,lpop,incr,hset"],
            capture_output=True, text=True, timeout=120)
        checks.append(("redis-benchmark 6 tests x 20000 requests",
                       bench.returncode == 0 and
                       bench.stdout.count("requests per second") == 6))
        checks.append(("server alive after benchmark", r.ping()))
        info = r.info("memory")
        checks.append(("INFO used_memory", info["used_memory"] > 0))
        for name, ok in checks:
            if ok:
                passed += 1
            else:
                failed += 1
                print(f"  FAIL {name}", file=sys.stderr)
        try:
            r.shutdown(nosave=True)
        except redis.ConnectionError:
            pass
        code = proc.wait(timeout=10)
        if code == 0:
            passed += 1
        else:
            failed += 1
            print(f"  FAIL redis-server exit code {code}: "
                  f"{proc.stderr.read().decode()[-2000:]}", file=sys.stderr)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"ebbmalloc drop-in redis-server: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
