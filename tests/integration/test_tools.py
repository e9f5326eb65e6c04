"""Debian's redis-cli and redis-benchmark against our server: what users
run first must work, and the counters must show the work was done."""
import re
import shutil
import subprocess

import pytest

CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
BENCH = shutil.which("redis-benchmark") or "/usr/bin/redis-benchmark"


def cli(port, *args, stdin=None):
    out = subprocess.run([CLI, "-h", "127.0.0.1", "-p", str(port)] + list(args), input=stdin,
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_cli_basic_commands(server):
    p = server.port
    assert cli(p, "PING") == "PONG\n"
    assert cli(p, "SET", "cli:k", "hello world") == "OK\n"
    assert cli(p, "GET", "cli:k") == "hello world\n"
    assert cli(p, "INCRBY", "cli:n", "5") == "5\n"
    assert cli(p, "GET", "nope") == "\n"
    assert cli(p, "MGET", "cli:k", "nope") == "hello world\n\n"
    assert "ERR unknown command 'NOPE'" in cli(p, "NOPE")
    assert cli(p, "DEL", "cli:k", "cli:n") == "2\n"


def test_cli_tty_style_output(server):
    """--no-raw is what an interactive user sees: types and quotes."""
    p = server.port
    cli(p, "SET", "cli:t", "v")
    assert cli(p, "--no-raw", "GET", "cli:t") == '"v"\n'
    assert cli(p, "--no-raw", "EXISTS", "cli:t") == "(integer) 1\n"
    assert cli(p, "--no-raw", "GET", "nope") == "(nil)\n"
    assert cli(p, "--no-raw", "INCR", "cli:t").startswith("(error) ERR value is not an integer")
    cli(p, "DEL", "cli:t")


def test_cli_reads_commands_from_stdin(server):
    out = cli(server.port, stdin="SET cli:s 1\nINCR cli:s\nGET cli:s\nDEL cli:s\n")
    assert out == "OK\n2\n2\n1\n"


def test_cli_resp3(server):
    out = cli(server.port, "-3", "HELLO", "3")
    assert "proto" in out and "3" in out
    out = cli(server.port, "-3", "--no-raw", "CONFIG", "GET", "hz")
    assert '1# "hz" => "10"' in out


def test_cli_scan(server):
    p = server.port
    cli(p, "FLUSHALL")
    cli(p, "MSET", *[x for i in range(300) for x in ("scan:%d" % i, "v")])
    cli(p, "SET", "other", "v")
    keys = cli(p, "--scan").split()
    assert sorted(keys) == sorted(["scan:%d" % i for i in range(300)] + ["other"])
    keys = cli(p, "--scan", "--pattern", "scan:1*").split()
    assert sorted(keys) == sorted("scan:%d" % i for i in range(300) if str(i).startswith("1"))
    cli(p, "FLUSHALL")


def test_cli_info(server):
    out = cli(server.port, "INFO", "memory")
    assert out.startswith("# Memory")
    assert re.search(r"^used_memory:\d+$", out, re.M)
    assert re.search(r"^mem_allocator:\S+$", out, re.M)
    out = cli(server.port, "INFO")
    assert "# Server" in out and "# Keyspace" in out and "loading:0" in out


def test_cli_stat_mode_runs(server):
    """redis-cli --stat polls INFO and prints a line per round: each must
    parse (keys, memory, clients) rather than show an error."""
    proc = subprocess.Popen(["stdbuf", "-oL", CLI, "-p", str(server.port), "--stat", "-i", "0.1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = proc.communicate(timeout=0.8)
    except subprocess.TimeoutExpired:
        proc.terminate()
        stdout, stderr = proc.communicate()
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    assert len(lines) >= 2 and all(w in lines[1] for w in ("keys", "mem", "clients")), stdout + stderr
    assert len(lines) >= 3 and re.match(r"^\d+\s+\S+[BKMG]\s+\d+", lines[2].strip()), lines
    assert "ERR" not in stdout


def total_commands(server):
    return server.client().info("stats")["total_commands_processed"]


def bench(port, *args):
    out = subprocess.run([BENCH, "-h", "127.0.0.1", "-p", str(port), "-q"] + list(args),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("test,cmds_per_request", [("ping", 2), ("set", 1), ("get", 1), ("incr", 1), ("mset", 1)])
def test_benchmark_each_test(server, test, cmds_per_request):
    n = 2000
    before = total_commands(server)
    out = bench(server.port, "-n", str(n), "-c", "4", "-t", test)
    assert "requests per second" in out, out
    done = total_commands(server) - before
    # PING runs twice (PING_INLINE and PING_MBULK); a few handshake commands
    # (CONFIG GET save/appendonly) come on top.
    assert n * cmds_per_request <= done <= n * cmds_per_request + 50, (test, done)


def test_benchmark_pipelined(server):
    n = 5000
    before = total_commands(server)
    out = bench(server.port, "-n", str(n), "-c", "4", "-P", "16", "-t", "set,get")
    assert out.count("requests per second") == 2, out
    done = total_commands(server) - before
    assert 2 * n <= done <= 2 * n + 50
    c = server.client()
    assert len(c.get("key:__rand_int__")) == 3, "SET with the default 3-byte payload"


def test_benchmark_random_keys(server):
    c = server.client()
    c.flushall()
    bench(server.port, "-n", "3000", "-c", "4", "-r", "1000", "-t", "set")
    assert 500 < c.dbsize() <= 1000, "-r spreads SETs over up to 1000 keys"
    c.flushall()
