"""crash-log-enabled against Debian's redis-server 7.0.15: DEBUG SEGFAULT
kills both servers with SIGSEGV; with the setting on (the default) each
log holds a bug report between its START and END lines: the signal and
si_code, the faulting address and instruction, a stack trace naming the
command's functions, the registers (RIP is the faulting instruction) and
the words on top of the stack, INFO, the client list, the running
command's arguments, the config lines a bug's reader asks about and the
crashed function's bytes; with it off (CONFIG SET at run time) nothing but the death.

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
    regs = report.split("------ REGISTERS ------")[1].split("------ INFO OUTPUT ------")[0]
    rip = re.search(r"RIP:([0-9a-f]{16}) EFL:[0-9a-f]{16}\n", regs)
    assert rip and re.search(r"RAX:[0-9a-f]{16} RBX:[0-9a-f]{16}\n", regs)
    rsp = int(re.search(r"RSP:([0-9a-f]{16})", regs).group(1), 16)
    words = re.findall(r"\(([0-9a-f]{16})\) -> [0-9a-f]{16}", regs)
    assert len(words) == 16 and rsp in [int(w, 16) for w in words]
    instr = int(re.search(r"Crashed running the instruction at: 0x([0-9a-f]+)", report).group(1), 16)
    assert int(rip.group(1), 16) == instr
    config = report.split("------ CONFIG DEBUG OUTPUT ------")[1]
    assert re.search(r"\nproto-max-bulk-len (512mb|536870912)\n", config)
    assert re.search(r"\nclient-query-buffer-limit (1gb|1073741824)\n", config)
    code = report.split("------ DUMPING CODE AROUND EIP ------")[1]
    sym = re.search(r"Symbol: ([\w() ]+) \(base: 0x([0-9a-f]+)\)", code)
    assert sym and int(sym.group(2), 16) <= instr  # the exported symbol at or before the fault
    hexdump = re.search(r"dump of function \(hexdump of (\d+) bytes\):\n(?:.*# )?([0-9a-f]+)\n", code)
    assert hexdump and len(hexdump.group(2)) == 2 * int(hexdump.group(1))
    assert int(hexdump.group(1)) > instr - int(sym.group(2), 16)  # up to the faulting instruction
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
