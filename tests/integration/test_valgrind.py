"""The server exits valgrind-clean: a libc build (so memcheck sees every
allocation) serves every data type, then SIGTERM; memcheck must report no
invalid access and no leaked block."""
import os
import subprocess
import time

import pytest
import redis

from conftest import ROOT, free_port

pytestmark = pytest.mark.slow


def test_valgrind_clean_shutdown(tmp_path):
    build = os.path.join(ROOT, "build", "valgrind")
    subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "src"), "BUILD_DIR=../build/valgrind", "MALLOC=libc",
                    "server"], check=True, capture_output=True)
    port = free_port()
    log = tmp_path / "vg.log"
    proc = subprocess.Popen(["valgrind", "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
                             "--error-exitcode=9", f"--log-file={log}", os.path.join(build, "redis-like-server"),
                             "--port", str(port), "--save", "", "--dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        c = redis.Redis(port=port, socket_timeout=30)
        for _ in range(300):
            try:
                c.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.1)
        c.set("s", "v" * 100)
        c.setex("t", 100, 1)
        for cmd in (["RPUSH", "l", "a", "b"], ["HSET", "h", "f", "v"], ["SADD", "st", "1", "x"],
                    ["ZADD", "z", "1", "m"], ["MULTI"], ["INCR", "n"], ["EXEC"], ["INFO", "all"],
                    ["MEMORY", "STATS"], ["CLIENT", "LIST"]):
            c.execute_command(*cmd)
        p = c.pipeline(transaction=False)
        for i in range(2000):
            p.set(f"k{i}", i)
        p.execute()
        c.close()
    finally:
        proc.terminate()
        rc = proc.wait(timeout=60)
    report = log.read_text()
    assert "definitely lost: 0 bytes" in report or "All heap blocks were freed" in report, report[-3000:]
    assert "Invalid read" not in report and "Invalid write" not in report, report[-3000:]
    assert rc == 0, report[-3000:]
