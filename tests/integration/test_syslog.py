"""syslog-enabled, syslog-ident and syslog-facility against Debian's
redis-server 7.0.15.

Each server runs in a mount namespace of its own (util-linux's unshare;
make test runs as root) whose /dev is a fresh tmpfs holding links to the
real devices and, as /dev/log, a datagram socket this test reads: what
syslog(3) sends is what a syslog daemon would get.  The host's /dev is not
touched.  A message is "<PRI>Mmm dd hh:mm:ss ident[pid]: text", with PRI
the facility times 8 plus the severity (Redis's: debug 7, verbose 6,
notice 5, warning 4)."""
import re
import socket
import threading
import time

import pytest

from conftest import REDIS_SERVER, SERVER

pytestmark = pytest.mark.differential

BINARIES = [SERVER, REDIS_SERVER]
IDS = ["ours", "redis"]

LOCAL0, LOCAL3 = 16, 19
NOTICE, WARNING = 5, 4

# $1: where the real /dev stays visible; $2: the test's socket; then the
# server's command line, exec'd so that its pid is the launcher's.
SANDBOX = ('mount --make-rprivate / && mount --rbind /dev "$1" && mount -t tmpfs rl-dev /dev && '
           'for f in "$1"/*; do ln -s "$f" /dev/; done && rm -f /dev/log && ln -s "$2" /dev/log && '
           'shift 2 && exec "$@"')

LINE = re.compile(r"<(\d+)>\w{3} [ \d]\d \d\d:\d\d:\d\d ([^\[:]+)(?:\[(\d+)\])?: (.*)", re.S)


@pytest.fixture
def syslog_sink(tmp_path):
    """(launcher, read): a server started under launcher logs to this
    socket; read() returns its messages as (facility, severity, ident, pid,
    text), pid None where syslog was not opened with LOG_PID, once the
    sender is done.  A thread reads all along, as a syslog daemon does:
    syslog(3) blocks when the socket's queue is full."""
    path = str(tmp_path / "log.sock")
    hostdev = tmp_path / "hostdev"
    hostdev.mkdir()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(0.2)
    got, done = [], threading.Event()

    def drain():
        while not done.is_set():
            try:
                got.append(sock.recv(65536).decode(errors="replace"))
            except socket.timeout:
                pass

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()

    def read():
        time.sleep(0.5)  # the last datagrams in flight
        out = []
        for data in list(got):
            m = LINE.fullmatch(data)
            assert m, "not a syslog message: %r" % data
            pri = int(m.group(1))
            out.append((pri >> 3, pri & 7, m.group(2), int(m.group(3)) if m.group(3) else None, m.group(4)))
        return out

    yield ["unshare", "-m", "sh", "-c", SANDBOX, "sh", str(hostdev), path], read
    done.set()
    reader.join()
    sock.close()


def start(start_server, binary, launcher, args):
    return start_server(list(args), binary=binary, launcher=launcher)


def stopped(s, read):
    """Stop s (SIGTERM), then the messages it sent."""
    assert s.stop() == 0
    return read()


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_lines_reach_syslog_with_ident_and_facility(start_server, syslog_sink, binary):
    launcher, read = syslog_sink
    s = start(start_server, binary, launcher,
              ["--syslog-enabled", "yes", "--syslog-ident", "rl-ident", "--syslog-facility", "local3"])
    c = s.client()
    assert c.config_get("syslog-*") == {"syslog-enabled": "yes", "syslog-ident": "rl-ident",
                                        "syslog-facility": "local3"}
    msgs = stopped(s, read)
    ours = [m for m in msgs if m[2] == "rl-ident"]
    assert ours and all(m[3] == s.pid for m in ours)
    assert (LOCAL3, NOTICE) in {(m[0], m[1]) for m in ours if m[4].startswith("Ready to accept connections")}
    assert (LOCAL3, WARNING, "User requested shutdown...") in {(m[0], m[1], m[4]) for m in ours}
    # the same lines go to the log as ever
    log = s.read_log()
    assert "Ready to accept connections" in log and "User requested shutdown..." in log


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_defaults_are_redis_and_local0(start_server, syslog_sink, binary):
    launcher, read = syslog_sink
    s = start(start_server, binary, launcher, ["--syslog-enabled", "yes"])
    assert s.client().config_get("syslog-*") == {"syslog-enabled": "yes", "syslog-ident": "redis",
                                                 "syslog-facility": "local0"}
    msgs = stopped(s, read)
    ready = [m for m in msgs if m[4].startswith("Ready to accept connections")]
    assert [(m[0], m[1], m[2], m[3]) for m in ready] == [(LOCAL0, NOTICE, "redis", s.pid)]


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_loglevel_filters_syslog_too(start_server, syslog_sink, binary):
    launcher, read = syslog_sink
    s = start(start_server, binary, launcher, ["--syslog-enabled", "yes", "--loglevel", "warning"])
    msgs = stopped(s, read)
    texts = [m[4] for m in msgs if m[2] == "redis"]
    assert "User requested shutdown..." in texts
    assert not any(t.startswith("Ready to accept connections") for t in texts)
    assert all(m[1] == WARNING for m in msgs if m[2] == "redis")


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_forked_child_logs_with_its_own_pid(start_server, syslog_sink, binary):
    launcher, read = syslog_sink
    s = start(start_server, binary, launcher, ["--syslog-enabled", "yes"])
    c = s.client()
    c.set("k", "v")
    c.bgsave()
    deadline = time.time() + 10
    while c.info("persistence")["rdb_bgsave_in_progress"] or c.info("persistence")["rdb_changes_since_last_save"]:
        assert time.time() < deadline, "BGSAVE did not finish"
        time.sleep(0.05)
    msgs = stopped(s, read)
    saved = [m for m in msgs if m[4] == "DB saved on disk"]
    assert len(saved) == 1 and saved[0][3] != s.pid and saved[0][2] == "redis"
    assert any(m[3] == s.pid and m[4] == "Background saving terminated with success" for m in msgs)


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_disabled_sends_nothing(start_server, syslog_sink, binary):
    launcher, read = syslog_sink
    s = start(start_server, binary, launcher, [])
    assert s.client().config_get("syslog-enabled") == {"syslog-enabled": "no"}
    assert stopped(s, read) == []


def test_settings_are_start_up_only(start_server):
    """CONFIG SET refuses all three with Redis's error."""
    errors = []
    for binary in BINARIES:
        c = start_server(binary=binary).client()
        row = []
        for name, value in (("syslog-enabled", "yes"), ("syslog-ident", "x"), ("syslog-facility", "user")):
            with pytest.raises(Exception) as e:
                c.config_set(name, value)
            row.append(str(e.value))
        errors.append(row)
    assert errors[0] == errors[1]
    assert "can't set immutable config" in errors[0][1]
