"""The cron and the number of clients: dynamic-hz raises the cron's rate
(INFO hz) while there are more than 200 clients per tick, as Redis 7.0
does (compared with Debian's redis-server), and the per-tick client
visits, a share of the clients each tick, still close every idle client
past `timeout`."""
import socket
import threading
import time

import pytest

from conftest import REDIS_SERVER


def open_clients(port, n):
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=5)
        s.sendall(b"PING\r\n")
        socks.append(s)
    for s in socks:
        assert s.recv(100) == b"+PONG\r\n"
    return socks


def info_hz(c):
    info = c.info("server")
    return info["hz"], info["configured_hz"]


def wait_hz(c, want, secs=5):
    deadline = time.time() + secs
    while time.time() < deadline:
        if info_hz(c)[0] == want:
            return True
        time.sleep(0.1)
    return False


@pytest.mark.differential
@pytest.mark.parametrize("binary", ["ours", REDIS_SERVER])
def test_dynamic_hz_follows_the_clients_like_redis(start_server, binary):
    s = start_server(["--hz", "2"]) if binary == "ours" else start_server(["--hz", "2"], binary=binary)
    c = s.client()
    assert info_hz(c) == (2, 2)
    assert c.config_get("dynamic-hz") == {"dynamic-hz": "yes"}
    socks = open_clients(s.port, 450)        # 451 clients: 451/2 > 200 -> 4 (112 per tick)
    try:
        assert wait_hz(c, 4), info_hz(c)
        c.config_set("dynamic-hz", "no")
        assert wait_hz(c, 2), info_hz(c)
        c.config_set("dynamic-hz", "yes")
        assert wait_hz(c, 4), info_hz(c)
    finally:
        for sk in socks:
            sk.close()
    assert wait_hz(c, 2), info_hz(c)         # back once they are gone


def test_every_idle_client_is_closed_with_many_clients(start_server):
    # 300 idle clients, then 100 busy ones (a new client goes first in the
    # server's list) at hz 10: a tick visits 40 of them, going on where
    # the last one stopped, so a full round takes a second; every idle one
    # must go within timeout + ~2 s while the busy ones stay.
    s = start_server(["--timeout", "1", "--hz", "10"])
    idle = open_clients(s.port, 300)
    busy = open_clients(s.port, 100)
    stop = threading.Event()

    def keep_busy():
        while not stop.is_set():
            for sk in busy:
                sk.sendall(b"PING\r\n")
                assert sk.recv(100) == b"+PONG\r\n"
            stop.wait(0.2)
    t = threading.Thread(target=keep_busy, daemon=True)
    t.start()
    start = time.time()
    try:
        for sk in idle:
            sk.settimeout(6)
            assert sk.recv(100) == b"", "closed by the server"
        assert time.time() - start < 4.5
        assert t.is_alive()                  # the busy ones were all answered
    finally:
        stop.set()
        t.join(5)
        for sk in idle + busy:
            sk.close()
