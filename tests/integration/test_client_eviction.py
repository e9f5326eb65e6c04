"""maxmemory-clients (client eviction) against Debian's redis-server
7.0.15: the values each takes and shows, and which clients each closes
when the clients together hold more than the limit: the one with a large
unfinished request, the one that does not read its replies, never one
that said CLIENT NO-EVICT on, and nobody when a percentage has no
maxmemory to be a share of.  The two servers measure a client's bytes
differently (buffer growth, what the kernel has taken), so each case
keeps well clear of the limit on both sides."""
import socket
import time

import pytest
import redis

from conftest import REDIS_SERVER, closed_by_server

pytestmark = pytest.mark.differential

BINARIES = ["ours", REDIS_SERVER]
LIMIT = 1024 * 1024


def start(start_server, binary, args=()):
    kw = {} if binary == "ours" else {"binary": binary}
    return start_server(list(args), **kw)


def evicted(c):
    return c.info("stats")["evicted_clients"]


def raw(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    return s


def send_partial_set(s, have, announce):
    """A SET whose value is announced as `announce` bytes of which only
    `have` are sent: the server must hold them in the query buffer (or
    close the connection while they arrive: the sending then stops)."""
    s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % announce)
    chunk = b"x" * 65536
    left = have
    try:
        while left > 0:
            s.sendall(chunk[:min(left, len(chunk))])
            left -= min(left, len(chunk))
    except OSError:
        pass


def ask(s, *args):
    """One command on a raw socket, its reply's first line."""
    s.sendall(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in args))
    s.settimeout(5)
    return s.recv(4096).split(b"\r\n")[0]


VALUES = [("0", "0"), ("1mb", "1048576"), ("10%", "10%"), ("100%", "100%"), ("0%", "0"),
          ("1gb", "1073741824"), ("50", "50"),
          ("101%", "percentage argument must be less or equal to 100"),
          ("-1", "argument must be a memory or percent value"),
          ("abc", "argument must be a memory or percent value"),
          ("1.5%", "argument must be a memory or percent value"),
          ("5%x", "argument must be a memory or percent value")]


@pytest.mark.parametrize("binary", BINARIES)
def test_values_taken_and_shown(start_server, binary):
    c = start(start_server, binary).client()
    assert c.config_get("maxmemory-clients") == {"maxmemory-clients": "0"}
    got = []
    for value, _ in VALUES:
        try:
            c.config_set("maxmemory-clients", value)
            got.append((value, c.config_get("maxmemory-clients")["maxmemory-clients"]))
        except redis.ResponseError as e:
            got.append((value, str(e).split(" - ")[-1]))
    assert got == VALUES


@pytest.mark.parametrize("binary", BINARIES)
def test_large_unfinished_request_is_evicted(start_server, binary):
    s = start(start_server, binary, ["--maxmemory-clients", str(LIMIT)])
    c = s.client()
    small = raw(s.port)
    assert ask(small, b"PING") == b"+PONG"
    big = raw(s.port)
    send_partial_set(big, 3 * LIMIT, 8 * LIMIT)
    assert closed_by_server(big, timeout=3)
    assert evicted(c) == 1
    assert ask(small, b"PING") == b"+PONG"  # the small ones stay
    assert c.ping()
    assert "Evicting client: id=" in s.read_log()


@pytest.mark.parametrize("binary", BINARIES)
def test_unread_replies_are_evicted(start_server, binary):
    s = start(start_server, binary)
    setter = s.client()
    setter.set("big", "v" * LIMIT)  # its query buffer held the value: it would go first
    setter.connection_pool.disconnect()
    c = s.client()
    wait_clients(c, 1)
    c.config_set("maxmemory-clients", str(LIMIT))
    reader = raw(s.port)
    reader.sendall(b"GET big\r\n" * 64)  # 64 MB of replies it never reads
    assert closed_without_reading(reader)
    assert evicted(c) == 1
    assert c.ping()


def wait_clients(c, n, secs=5):
    deadline = time.time() + secs
    while len(c.client_list()) != n:
        assert time.time() < deadline, c.client_list()
        time.sleep(0.02)


def closed_without_reading(s, secs=5):
    """Whether the server closed s, told by a send failing (the replies
    are left unread, so EOF cannot be seen)."""
    deadline = time.time() + secs
    while time.time() < deadline:
        time.sleep(0.1)
        try:
            s.sendall(b"PING\r\n")
        except OSError:
            return True
    return False


@pytest.mark.parametrize("binary", BINARIES)
def test_no_evict_client_is_spared_and_still_counts(start_server, binary):
    # As Redis: a CLIENT NO-EVICT client is never closed, but its bytes
    # count, so the others go while it holds more than the limit.
    s = start(start_server, binary, ["--maxmemory-clients", str(LIMIT)])
    c = s.client()
    c.client_no_evict("on")  # this test's own client must stay to look
    small = raw(s.port)
    assert ask(small, b"PING") == b"+PONG"
    big = raw(s.port)
    assert ask(big, b"CLIENT", b"NO-EVICT", b"on") == b"+OK"
    send_partial_set(big, 3 * LIMIT, 8 * LIMIT)
    assert closed_by_server(small, timeout=3)
    assert not closed_by_server(big, timeout=1)
    assert evicted(c) == 1
    flags = sorted(cl["flags"] for cl in c.client_list())
    assert flags == ["e", "e"]


@pytest.mark.parametrize("binary", BINARIES)
def test_percent_of_maxmemory(start_server, binary):
    # 5% of 20 MB is the 1 MB limit; with maxmemory 0 a share is no limit.
    s = start(start_server, binary, ["--maxmemory", "20mb", "--maxmemory-clients", "5%"])
    c = s.client()
    big = raw(s.port)
    send_partial_set(big, 3 * LIMIT, 8 * LIMIT)
    assert closed_by_server(big, timeout=3)
    assert evicted(c) == 1
    c.config_set("maxmemory", "0")
    big = raw(s.port)
    send_partial_set(big, 3 * LIMIT, 8 * LIMIT)
    assert not closed_by_server(big, timeout=1)
    assert evicted(c) == 1
    c.config_set("maxmemory", "20mb")  # the share applies again at once
    assert closed_by_server(big, timeout=3)
    assert evicted(c) == 2


@pytest.mark.parametrize("binary", BINARIES)
def test_limit_set_at_run_time_applies_to_existing_clients(start_server, binary):
    s = start(start_server, binary)
    c = s.client()
    big = raw(s.port)
    send_partial_set(big, 3 * LIMIT, 8 * LIMIT)
    assert not closed_by_server(big, timeout=0.5)
    c.config_set("maxmemory-clients", str(LIMIT))
    assert closed_by_server(big, timeout=3)
    assert evicted(c) == 1
