"""Redis 7.2/7.4's settings and event loop figures (issue 47), against
Redis 7.4.1 (a live one from utils/dev/redis74-ref.sh, else its replies
recorded in transcripts/config_74_74.json.gz; ref74.py):

  - CONFIG GET of hide-user-data-from-log, locale-collate,
    max-new-connections-per-cycle, max-new-tls-connections-per-cycle and
    the *-cpulist names (7.4's hyphenated ones, 7.0's as aliases), and
    CONFIG SET's errors for them, are 7.4.1's;
  - locale-collate is what SORT ALPHA's strcoll compares by: en_US.UTF-8
    (compiled by localedef into a directory of the test's, LOCPATH) puts
    "a" next to "A" where C sorts every capital first; a locale that does
    not exist is refused by CONFIG SET and stops the start-up at its line;
  - max-new-connections-per-cycle accepts that many connections per loop
    round: 100 connections waiting while the loop sleeps in DEBUG SLEEP
    take at least 100 rounds at 1 per round, and a few at 1000; many
    simultaneous connects all get served, on both socket engines;
  - INFO's eventloop_cycles, eventloop_duration_sum and
    eventloop_duration_cmd_sum only grow, the commands' part stays within
    the rounds' time, and a 200 ms command counts in both;
  - hide-user-data-from-log keeps keys and arguments out of the log: DEBUG
    LISTPACK's key, the crash report's arguments past the command's name
    and the words on the stack (7.4.1's texts).

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_config_74.py"""
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest
import redis

from conftest import SERVER
from ref74 import Ref74

ENGINES = ["epoll", "io_uring"]
NEW = ["hide-user-data-from-log", "locale-collate", "max-new-connections-per-cycle",
       "max-new-tls-connections-per-cycle"]
CPULISTS = ["server", "bio", "aof-rewrite", "bgsave"]


@pytest.fixture(scope="module")
def ref():
    r = Ref74("config_74")
    yield r
    r.stop()


def call(c, *args):
    """A reply as the transcript keeps it: CONFIG GET's pairs sorted, an
    error as ("error", text)."""
    try:
        reply = c.execute_command(*args)
    except redis.ResponseError as e:
        return ("error", str(e).encode())
    if isinstance(reply, list):
        pairs = sorted(zip(reply[0::2], reply[1::2]))
        return [x for p in pairs for x in p]
    return reply


def raw_client(port):
    c = redis.Redis(port=port, decode_responses=False)
    c.response_callbacks.clear()
    return c


REQUESTS = ([["CONFIG", "GET", n] for n in NEW] +
            [["CONFIG", "GET", "*cpulist*"], ["CONFIG", "GET", "max-new-*"]] +
            [["CONFIG", "SET", "locale-collate", "xx_NOWHERE.UTF-8"],
             ["CONFIG", "SET", "max-new-connections-per-cycle", "0"],
             ["CONFIG", "SET", "max-new-connections-per-cycle", "1001"],
             ["CONFIG", "SET", "max-new-tls-connections-per-cycle", "abc"],
             ["CONFIG", "SET", "hide-user-data-from-log", "maybe"]] +
            [["CONFIG", "SET", name, "0"] for p in CPULISTS for name in (p + "-cpulist", p.replace("-", "_") +
                                                                         "_cpulist")] +
            [["CONFIG", "SET", "max-new-connections-per-cycle", "1000", "max-new-tls-connections-per-cycle", "7",
              "hide-user-data-from-log", "yes", "locale-collate", "C"],
             ["CONFIG", "GET", "max-new-*"], ["CONFIG", "GET", "hide-user-data-from-log"],
             ["CONFIG", "GET", "locale-collate"],
             ["CONFIG", "SET", "locale-collate", ""], ["CONFIG", "GET", "locale-collate"]])


def test_config_get_and_set_are_74s(start_server, ref):
    c = raw_client(start_server().port)
    live = raw_client(ref.port) if ref.live else None
    for i, req in enumerate(REQUESTS):              # in order: later ones see the SETs
        assert call(c, *req) == ref.reply(["call", str(i)] + req, lambda: call(live, *req)), req


def test_rewrite_keeps_them(start_server):
    s = start_server(config_text="save \"\"\n")
    c = s.client()
    c.config_set("locale-collate", "C")
    c.config_set("max-new-connections-per-cycle", 5)
    c.config_set("max-new-tls-connections-per-cycle", 3)
    c.config_set("hide-user-data-from-log", "yes")
    c.config_rewrite()
    with open(os.path.join(s.dir, "test.conf")) as f:
        text = f.read()
    for line in ("locale-collate C", "max-new-connections-per-cycle 5", "max-new-tls-connections-per-cycle 3",
                 "hide-user-data-from-log yes"):
        assert line in text.splitlines()
    s.stop()
    c = start_server(config_text=text).client()
    assert c.config_get("locale-collate") == {"locale-collate": "C"}
    assert c.config_get("max-new-*") == {"max-new-connections-per-cycle": "5",
                                         "max-new-tls-connections-per-cycle": "3"}
    assert c.config_get("hide-user-data-from-log") == {"hide-user-data-from-log": "yes"}


# ------------------------------------------------------------ locale-collate

WORDS = ["b", "B", "a", "A", "e", "\u00e9", "E"]


def sort_alpha(c):
    c.delete("l")
    c.rpush("l", *WORDS)
    return c.sort("l", alpha=True)


def test_c_locale_sorts_bytes_and_bad_locale_is_refused(start_server):
    c = start_server(["--locale-collate", "C"]).client()
    assert sort_alpha(c) == ["A", "B", "E", "a", "b", "e", "\u00e9"]
    with pytest.raises(redis.ResponseError, match="Invalid locale name"):
        c.config_set("locale-collate", "xx_NOWHERE.UTF-8")
    assert c.config_get("locale-collate") == {"locale-collate": "C"}
    c.config_set("locale-collate", "POSIX")
    assert sort_alpha(c) == ["A", "B", "E", "a", "b", "e", "\u00e9"]


def test_bad_locale_stops_start_up(tmp_path):
    path = tmp_path / "redis.conf"
    path.write_text("port 0\n\nlocale-collate xx_NOWHERE.UTF-8\n")
    out = subprocess.run([SERVER, str(path)], capture_output=True, text=True, timeout=10)
    assert out.returncode == 1
    text = out.stdout + out.stderr
    assert "at line 3" in text and "Invalid locale name" in text


@pytest.fixture(scope="module")
def en_us(tmp_path_factory):
    """A directory holding en_US.UTF-8, for LOCPATH; None where localedef
    or the locale's sources are missing."""
    d = tmp_path_factory.mktemp("locales")
    if not shutil.which("localedef") or not os.path.exists("/usr/share/i18n/locales/en_US"):
        return None
    p = subprocess.run(["localedef", "-i", "en_US", "-f", "UTF-8", str(d / "en_US.UTF-8")], capture_output=True,
                       timeout=60)
    return str(d) if p.returncode in (0, 1) and (d / "en_US.UTF-8").exists() else None


def test_locale_changes_sort_alpha(start_server, en_us, monkeypatch):
    if en_us is None:
        pytest.skip("no localedef or en_US sources to build en_US.UTF-8 with")
    monkeypatch.setenv("LOCPATH", en_us)
    c = start_server(["--locale-collate", "C"]).client()
    assert sort_alpha(c) == ["A", "B", "E", "a", "b", "e", "\u00e9"]
    c.config_set("locale-collate", "en_US.UTF-8")
    assert sort_alpha(c) == ["a", "A", "b", "B", "e", "E", "\u00e9"]
    # SORT ... STORE compares bytes whatever the locale (as Redis does)
    c.sort("l", alpha=True, store="dst")
    assert c.lrange("dst", 0, -1) == ["A", "B", "E", "a", "b", "e", "\u00e9"]
    c.config_set("locale-collate", "C")
    assert sort_alpha(c) == ["A", "B", "E", "a", "b", "e", "\u00e9"]
    # from the command line too
    c2 = start_server(["--locale-collate", "en_US.UTF-8"]).client()
    assert sort_alpha(c2) == ["a", "A", "b", "B", "e", "E", "\u00e9"]


# ------------------------------------------------------ connections per cycle

def cycles(c):
    return c.info("stats")["eventloop_cycles"]


def rounds_to_accept(s, n, port=None):
    """Loop rounds the server takes to accept n connections (to port, the
    server's own by default) that wait in the backlog while it sleeps; the
    sockets are returned open."""
    c, sleeper = s.client(), s.client()
    sleeper.execute_command("CLIENT", "ID")
    before_clients = 2
    deadline = time.time() + 10
    while c.info("clients")["connected_clients"] > before_clients and time.time() < deadline:
        time.sleep(0.01)                              # an earlier call's sockets are gone
    socks = []
    start = cycles(c)
    t = threading.Thread(target=lambda: sleeper.execute_command("DEBUG", "SLEEP", "0.5"))
    t.start()
    time.sleep(0.1)                                   # the loop is asleep in the command
    for _ in range(n):
        socks.append(socket.create_connection(("127.0.0.1", port or s.port), timeout=5))
    t.join()
    deadline = time.time() + 10
    while c.info("clients")["connected_clients"] < before_clients + n and time.time() < deadline:
        pass
    assert c.info("clients")["connected_clients"] == before_clients + n
    return cycles(c) - start, socks


@pytest.mark.parametrize("engine", ENGINES)
def test_accepts_per_cycle(start_server, engine):
    s = start_server(["--io-engine", engine, "--enable-debug-command", "local", "--max-new-connections-per-cycle",
                      "1"])
    taken, socks = rounds_to_accept(s, 100)
    assert taken >= 100, taken                        # one per round
    for so in socks:
        so.close()
    s.client().config_set("max-new-connections-per-cycle", 1000)
    taken, socks = rounds_to_accept(s, 100)
    assert taken < 50, taken                          # all in a round or a few
    for so in socks:
        so.close()


@pytest.mark.parametrize("engine", ENGINES)
def test_many_simultaneous_connects_all_served(start_server, engine):
    s = start_server(["--io-engine", engine, "--max-new-connections-per-cycle", "1"])
    socks = [socket.create_connection(("127.0.0.1", s.port), timeout=10) for _ in range(300)]
    for so in socks:
        so.sendall(b"PING\r\n")
    for so in socks:
        got = b""
        while not got.endswith(b"\r\n"):
            chunk = so.recv(64)
            assert chunk, "closed"
            got += chunk
        assert got == b"+PONG\r\n"
        so.close()


# ------------------------------------------------------------ INFO durations

def durations(c):
    st = c.info("stats")
    return (st["eventloop_cycles"], st["eventloop_duration_sum"], st["eventloop_duration_cmd_sum"],
            st["instantaneous_eventloop_duration_usec"])


@pytest.mark.parametrize("engine", ENGINES)
def test_eventloop_durations(start_server, engine):
    s = start_server(["--io-engine", engine, "--enable-debug-command", "local"])
    c = s.client()
    last = durations(c)
    for i in range(30):
        c.set("k%d" % i, "v")
        c.mset({"a%d" % j: j for j in range(50)})
        now = durations(c)
        assert all(n >= l for n, l in zip(now[:3], last[:3])), (last, now)
        assert now[2] <= now[1], now                  # the commands' part of the rounds' time
        assert now[3] >= 0
        last = now
    assert last[0] > 0 and last[1] > 0 and last[2] > 0
    c.execute_command("DEBUG", "SLEEP", "0.2")
    after = durations(c)
    assert after[2] - last[2] >= 200000               # microseconds
    assert after[1] - last[1] >= 200000
    # the mean round of the last samples shows the 200 ms one
    assert after[1] >= after[2]
    deadline = time.time() + 2
    while durations(c)[3] == 0 and time.time() < deadline:
        time.sleep(0.05)
    assert durations(c)[3] > 0
    c.config_resetstat()
    zero = durations(c)
    assert zero[1] < after[1] and zero[2] < after[2]


# ----------------------------------------------------- hide-user-data-from-log

def test_hidden_key_in_debug_listpack(start_server):
    s = start_server(["--enable-debug-command", "local"])
    c = s.client()
    c.hset("visible-key-name", "f", "v")
    c.hset("secret-key-name", "f", "v")
    c.execute_command("DEBUG", "LISTPACK", "visible-key-name")
    c.config_set("hide-user-data-from-log", "yes")
    c.execute_command("DEBUG", "LISTPACK", "secret-key-name")
    deadline = time.time() + 5
    while "*redacted*" not in s.read_log() and time.time() < deadline:
        time.sleep(0.05)
    log = s.read_log()
    assert "DEBUG LISTPACK visible-key-name" in log
    assert "DEBUG LISTPACK *redacted*" in log
    assert "secret-key-name" not in log


def test_crash_report_hides_arguments(start_server):
    s = start_server(["--enable-debug-command", "local", "--hide-user-data-from-log", "yes"])
    c = s.client()
    with pytest.raises(redis.ConnectionError):
        c.execute_command("DEBUG", "SEGFAULT")
    assert s.proc.wait(10) == -signal.SIGSEGV
    log = s.read_log()
    client = log.split("------ CURRENT CLIENT INFO ------")[1]
    assert re.search(r"argv\[0\]: '?\"debug\"'?\n", client, re.IGNORECASE)
    assert "argv[1]: *redacted*\n" in client and "segfault" not in client.lower().split("cmd=debug")[1]
    regs = log.split("------ REGISTERS ------")[1].split("------ INFO OUTPUT ------")[0]
    assert "hide-user-data-from-log is on, skip logging stack content to avoid spilling PII." in regs
    assert not re.search(r"\(([0-9a-f]{16})\) -> [0-9a-f]{16}", regs)
