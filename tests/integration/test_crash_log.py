"""crash-log-enabled against Debian's redis-server 7.0.15: DEBUG SEGFAULT
kills both servers with SIGSEGV; with the setting on (the default) each
log holds a bug report between its START and END lines: the signal and
si_code, the faulting address and instruction, a stack trace naming the
command's functions, INFO, the client list and the running command's
arguments; with it off (CONFIG SET at run time) nothing but the death.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_crash_log.py"""
import re
import signal

import pytest
import redis

from conftest import REDIS_SERVER, SERVER

pytestmark = pytest.mark.differential

BINARIES = [SERVER, REDIS_SERVER]
IDS = ["ours", "redis"]


def crash(start_server, binary, *args):
    s = start_server(["--enable-debug-command", "local"] + list(args), binary=binary)
    c = s.client()
    c.set("k", "v")
    with pytest.raises(redis.ConnectionError):
        c.execute_command("DEBUG", "SEGFAULT")
    assert s.proc.wait(10) == -signal.SIGSEGV
    return s.read_log()


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_report(start_server, binary):
    log = crash(start_server, binary)
    start = log.index("BUG REPORT START: Cut & paste starting from here ===")
    end = log.index("BUG REPORT END. Make sure to include from START to END. ===")
    report = log[start:end]
    assert re.search(r"crashed by signal: 11, si_code: 2\n", report)
    assert re.search(r"Accessing address: 0x[0-9a-f]+\n", report)
    assert re.search(r"Crashed running the instruction at: 0x[0-9a-f]+\n", report)
    trace = report.split("------ STACK TRACE ------")[1].split("------ INFO OUTPUT ------")[0]
    assert re.search(r"\((call|dispatch_call)\+0x[0-9a-f]+\)", trace)    # names, not bare addresses
    info = report.split("------ INFO OUTPUT ------")[1]
    assert "# Keyspace\r\ndb0:keys=1," in info or "# Keyspace\ndb0:keys=1," in info
    client = report.split("------ CURRENT CLIENT INFO ------")[1]
    assert "cmd=debug" in client
    assert re.search(r"argv\[1\]: '?\"segfault\"'?\n", client, re.IGNORECASE)


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_off(start_server, binary):
    s = start_server(["--enable-debug-command", "local"], binary=binary)
    c = s.client()
    assert c.config_get("crash-log-enabled") == {"crash-log-enabled": "yes"}
    c.config_set("crash-log-enabled", "no")
    with pytest.raises(redis.ConnectionError):
        c.execute_command("DEBUG", "SEGFAULT")
    assert s.proc.wait(10) == -signal.SIGSEGV
    assert "crashed by signal" not in s.read_log()
