"""redis-like-server's own command-line flags, as Redis 7.0.15's (issue 48):
--help/-h (the ways to start it), --version/-v (our version, the malloc, the
Redis version we match, the socket engines), --test-memory <MB>,
--check-system, and a configuration read from stdin (`-`).  Compared with
Debian's redis-server where Redis defines the behaviour.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_cli_flags.py"""
import re
import subprocess
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER, free_port

pytestmark = pytest.mark.differential


def run(binary, *args, stdin=None):
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=60, input=stdin)


@pytest.mark.parametrize("flag", ["--version", "-v"])
def test_version_names_ours_the_redis_surface_the_allocator_and_engines(flag, server):
    out = run(SERVER, flag)
    assert out.returncode == 0
    m = re.match(r"^redis-like server v=(\d+\.\d+\.\d+) sha=[0-9a-f]{8}:\d malloc=(\S+) bits=64 build=[0-9a-f]+ "
                 r"redis=(\d+\.\d+\.\d+) io-engine=auto\(([a-z_,]+)\)\n$", out.stdout)
    assert m, out.stdout
    info = server.client(decode_responses=True).info("server")
    mem = server.client(decode_responses=True).info("memory")
    assert m.group(1) == info["redis_like_version"]
    assert m.group(2) == mem["mem_allocator"]
    assert m.group(3) == info["redis_version"]
    assert info["io_engine"] in m.group(4).split(",")
    # Redis's own line starts the same way, so tools that read v= and malloc= read ours.
    ref = run(REDIS_SERVER, flag)
    assert re.match(r"^Redis server v=\S+ sha=\S+ malloc=\S+ bits=64 build=\S+", ref.stdout)


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_lists_every_way_redis_lists(flag):
    ours, ref = run(SERVER, flag), run(REDIS_SERVER, flag)
    assert ours.returncode == ref.returncode == 1
    assert ours.stdout == ""
    ways = lambda text, prog: {line.split(prog, 1)[1].strip()  # noqa: E731
                               for line in text.split("Examples:")[0].splitlines() if prog in line}
    theirs, mine = ways(ref.stderr, "./redis-server"), ways(ours.stderr, "./redis-like-server")
    theirs = {w.replace("redis.conf", "redis-like.conf") for w in theirs}
    assert theirs <= mine, theirs - mine
    assert "--test-memory <megabytes>" in mine and "--check-system" in mine


def test_test_memory_passes_and_wants_a_size():
    out = run(SERVER, "--test-memory", "2")
    assert out.returncode == 0, out.stdout + out.stderr
    assert len(re.findall(r"^pass \d+ of 50:", out.stdout, re.M)) == 50
    assert "Your memory passed this test." in out.stdout
    for bad in ((), ("abc",), ("0",), ("-5",)):
        mine, theirs = run(SERVER, "--test-memory", *bad), run(REDIS_SERVER, "--test-memory", *bad[:0])
        assert mine.returncode == 1 and "megabytes" in mine.stderr, bad
        assert theirs.returncode == 1   # Redis too refuses a missing size


def checks(text):
    """{name: "OK" | "WARNING"} from a --check-system report."""
    return dict(re.findall(r"^\[([\w-]+)\]\.\.\.(OK|WARNING)", text, re.M))


def test_check_system_runs_redis_checks_with_the_same_verdicts():
    ours, ref = run(SERVER, "--check-system"), run(REDIS_SERVER, "--check-system")
    mine, theirs = checks(ours.stdout), checks(ref.stdout)
    assert set(mine) == set(theirs), (ours.stdout, ref.stdout)
    # The same host settings, read the same way (the clock's speed is timed, not read).
    for name in ("xen-clocksource", "overcommit", "THP"):
        assert mine[name] == theirs[name], (name, ours.stdout, ref.stdout)
    assert ours.returncode == (1 if "WARNING" in mine.values() else 0)
    assert ref.returncode == (1 if "WARNING" in theirs.values() else 0)


def start_with_stdin(binary, args, text, cwd):
    """A server whose stdin is `text`; (process, client) once it answers."""
    port = free_port()
    p = subprocess.Popen([binary, *args, "--port", str(port), "--dir", str(cwd), "-"], stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True, cwd=str(cwd))
    p.stdin.write(text)
    p.stdin.close()
    c = redis.Redis(port=port, decode_responses=True)
    deadline = time.time() + 10
    while True:
        try:
            c.ping()
            return p, c
        except redis.ConnectionError:
            assert p.poll() is None and time.time() < deadline, "server did not start"
            time.sleep(0.05)


def test_config_from_stdin(tmp_path):
    """A trailing `-`: stdin's lines come after the file's and before the
    options, as in Redis; and `-` alone as the file."""
    conf = tmp_path / "test.conf"
    conf.write_text("maxmemory 10mb\nhz 20\nsave \"\"\n")
    seen = {}
    for binary in (SERVER, REDIS_SERVER):
        p, c = start_with_stdin(binary, [str(conf), "--hz", "30"], "maxmemory 20mb\nhz 25\n", tmp_path)
        try:
            seen[binary] = (c.config_get("maxmemory")["maxmemory"], c.config_get("hz")["hz"])
        finally:
            p.kill()
            p.wait()
    assert seen[SERVER] == seen[REDIS_SERVER] == ("20971520", "30")
    p = subprocess.run([SERVER, "-"], input="nosuchdirective 1\n", capture_output=True, text=True, timeout=10)
    assert p.returncode == 1 and "nosuchdirective" in p.stdout + p.stderr   # stdin was read
