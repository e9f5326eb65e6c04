"""The shipped redis-like.conf (what `make run` uses) loads, and every
directive it sets is one CONFIG GET knows, with the documented value."""
import os
import re
import subprocess

import pytest

from conftest import REDIS_SERVER, ROOT, SERVER


def conf_directives():
    out = {}
    with open(os.path.join(ROOT, "redis-like.conf")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, value = line.partition(" ")
            out.setdefault(name, []).append(value.strip().strip('"'))
    return out


def test_shipped_config_loads(start_server):
    with open(os.path.join(ROOT, "redis-like.conf")) as f:
        text = f.read()
    s = start_server(config_text=text)
    c = s.client()
    assert c.ping()
    directives = conf_directives()
    assert len(directives) > 50
    for name, values in directives.items():
        got = c.config_get(name)
        assert name in got, f"{name} from redis-like.conf is unknown to CONFIG GET"
    assert c.config_get("maxmemory-policy")["maxmemory-policy"] == "noeviction"
    assert c.config_get("hz")["hz"] == "10"
    assert re.match(r"normal 0 0 0 slave \d+ \d+ 60 pubsub \d+ \d+ 60",
                    c.config_get("client-output-buffer-limit")["client-output-buffer-limit"])


# Debian's redis-server package ships this file (utils/install-deps.sh
# installs the package for the differential tests).
STOCK_CONF = "/etc/redis/redis.conf"
# Where the stock file's settings would leave a test server (a daemon
# logging to /var/log): back to the foreground and the test's directory.
STOCK_OVERRIDES = ["--daemonize", "no", "--logfile", "", "--pidfile", ""]


def test_redis_stock_config_loads_in_both(start_server):
    # A Redis user's configuration starts redis-like unchanged: Redis 7.0
    # directives it has no parameter for are taken at the values that mean
    # what it does (the stock file sets only such values: no line is
    # named in the log), and the title it asks for is the one ps shows.
    # Redis itself starts from the same file.
    with open(STOCK_CONF) as f:
        text = f.read()
    ref = start_server(binary="/usr/bin/redis-server", config_text=text, args=STOCK_OVERRIDES)
    ours = start_server(config_text=text, args=STOCK_OVERRIDES)
    assert ref.client().ping() and ours.client().ping()
    c = ours.client()
    assert c.config_get("maxmemory-policy") == ref.client().config_get("maxmemory-policy")
    assert c.config_get("set-proc-title") == ref.client().config_get("set-proc-title") == {"set-proc-title": "yes"}
    assert c.config_get("disable-thp") == ref.client().config_get("disable-thp")
    assert "has no effect in redis-like" not in ours.read_log()
    with open("/proc/%d/cmdline" % ours.proc.pid, "rb") as f:
        assert f.read().split(b"\0")[0].decode().endswith(" 127.0.0.1:%d" % ours.port)
    assert c.config_get("activerehashing") == ref.client().config_get("activerehashing")


def test_redis_only_directive_at_our_behaviour_is_silent(start_server):
    s = start_server(["--activerehashing", "yes", "--always-show-logo", "no", "--io-threads", "1",
                      "--oom-score-adj-values", "0", "200", "800"])
    assert s.client().ping()
    assert "has no effect" not in s.read_log()


@pytest.mark.parametrize("line,reason", [
    ("supervised maybe", "argument(s) must be one of the following: no, upstart, systemd, auto"),
    ("syslog-facility bogus", "argument(s) must be one of the following: user, local0, local1, local2, "
                              "local3, local4, local5, local6, local7"),
    ("appendfilename a/b.aof", "appendfilename can't be a path, just a filename"),
    ("appenddirname /tmp/x", "appenddirname can't be a path, just a dirname"),
    ("activerehashing", "wrong number of arguments"),
    ("syslog-ident", "wrong number of arguments"),         # any value, but one is needed
    ("ignore-warnings", "wrong number of arguments"),
])
def test_redis_only_directive_refused(tmp_path, line, reason):
    # A value redis-like would silently not honour (a limit, where the log
    # goes) or cannot read stops start-up, with the line.
    path = tmp_path / "redis.conf"
    path.write_text("port 7000\n%s\n" % line)
    out = subprocess.run([SERVER, str(path), "--port", "0"], capture_output=True, text=True, timeout=10)
    text = out.stdout + out.stderr
    assert out.returncode == 1
    assert "at line 2" in text and ">>> '%s'" % line in text
    assert reason in text


@pytest.mark.differential
@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
@pytest.mark.parametrize("logo", ["yes", "no"])
def test_always_show_logo(start_server, binary, logo):
    """With always-show-logo yes the start-up banner (each server its own
    drawing) names the port and pid; with no, and stdout not a terminal,
    Redis's one line instead."""
    s = start_server(["--always-show-logo", logo], binary=binary)
    log = s.read_log()
    banner = "Port: %d\n" % s.port in log and "PID: %d\n" % s.proc.pid in log
    one_line = "Running mode=standalone, port=%d." % s.port in log
    assert (banner, one_line) == ((True, False) if logo == "yes" else (False, True))
    assert s.client().config_get("always-show-logo") == {"always-show-logo": logo}
