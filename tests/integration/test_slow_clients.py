"""Slow and hostile clients: a reader that stops reading (normal and pubsub
output-buffer limits close it and the server's memory stays bounded),
idle connections up to maxclients and one over it (Redis's error), a
client that trickles one byte at a time (timeout closes it), a pipeline
of a million commands (memory bounded), and the per-client memory figures
(CLIENT LIST qbuf/qbuf-free/omem/tot-mem, INFO mem_clients_normal)."""
import resource
import socket
import threading
import time

import pytest

from conftest import closed_by_server
from rawresp import RawConn


def wait_for(fn, timeout=10.0, step=0.05):
    deadline = time.time() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.time() > deadline:
            raise AssertionError("condition not reached in %.1f s" % timeout)
        time.sleep(step)


def stuck_reader(port):
    """A connection with a tiny receive buffer that never reads."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    return s


def test_normal_output_limit_closes_a_client_that_stops_reading(start_server):
    s = start_server(args=("--client-output-buffer-limit", "normal 2mb 0 0"))
    r = s.client()
    r.set("big", "x" * 100_000)
    base = r.info("memory")["used_memory"]
    c = stuck_reader(s.port)
    c.sendall(b"GET big\r\n" * 200)                     # 20 MB of replies
    wait_for(lambda: "overcoming of output buffer limits" in s.read_log())
    assert r.info("memory")["used_memory"] - base < 8 << 20
    assert closed_by_server(c)
    assert len(r.client_list()) == 1


def test_pubsub_output_limit_closes_a_subscriber_that_stops_reading(start_server):
    s = start_server(args=("--client-output-buffer-limit", "pubsub 1mb 512kb 60"))
    r = s.client()
    c = stuck_reader(s.port)
    c.sendall(b"SUBSCRIBE ch\r\n")
    wait_for(lambda: r.pubsub_numsub("ch")[0][1] == 1)
    base = r.info("memory")["used_memory"]
    payload = "p" * 10_000
    for _ in range(1000):                                 # 10 MB published
        if r.publish("ch", payload) == 0:
            break
    wait_for(lambda: r.pubsub_numsub("ch")[0][1] == 0)
    assert r.info("memory")["used_memory"] - base < 8 << 20
    assert "overcoming of output buffer limits" in s.read_log()
    assert closed_by_server(c)


def test_maxclients_plus_one_gets_redis_error(start_server):
    n = 1000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 200), hard))
    s = start_server(args=("--maxclients", str(n)))
    r = s.client()
    r.ping()
    socks = []
    try:
        for _ in range(n - 1):                             # r holds one slot
            so = socket.create_connection(("127.0.0.1", s.port))
            socks.append(so)
        wait_for(lambda: r.info("clients")["connected_clients"] == n)
        extra = socket.create_connection(("127.0.0.1", s.port), timeout=5)
        data = b""
        while not data.endswith(b"\r\n"):
            chunk = extra.recv(100)
            if not chunk:
                break
            data += chunk
        assert data == b"-ERR max number of clients reached\r\n"
        assert closed_by_server(extra)
        assert r.info("stats")["rejected_connections"] >= 1
        # The idle ones are all still served.
        socks[0].sendall(b"PING\r\n")
        assert socks[0].recv(100) == b"+PONG\r\n"
        socks[-1].sendall(b"PING\r\n")
        assert socks[-1].recv(100) == b"+PONG\r\n"
    finally:
        for so in socks:
            so.close()


def test_timeout_closes_a_client_trickling_one_byte_at_a_time(start_server):
    s = start_server(args=("--timeout", "1"))
    r = s.client()
    so = socket.create_connection(("127.0.0.1", s.port))
    request = b"*3\r\n$3\r\nSET\r\n$4\r\nslow\r\n$100\r\n" + b"v" * 100 + b"\r\n"
    closed = False
    start = time.time()
    for i, b in enumerate(request):
        try:
            so.sendall(bytes([b]))
        except OSError:
            closed = True
            break
        time.sleep(0.25)                                   # never idle for a whole second
        if time.time() - start > 6:
            break
    assert closed or closed_by_server(so, timeout=3)
    assert time.time() - start < 8
    assert r.get("slow") is None
    # An idle client that sent nothing is closed by the plain timeout too.
    idle = socket.create_connection(("127.0.0.1", s.port))
    assert closed_by_server(idle, timeout=5)


def test_million_command_pipeline_memory_bounded(start_server):
    s = start_server()
    r = s.client()
    base = r.info("memory")["used_memory"]
    n = 1_000_000
    so = socket.create_connection(("127.0.0.1", s.port))
    chunk = b"*2\r\n$4\r\nINCR\r\n$3\r\nctr\r\n" * 10_000

    def send():
        for _ in range(n // 10_000):
            so.sendall(chunk)
    t = threading.Thread(target=send)
    t.start()
    peak_seen = 0
    got = 0
    buf = b""
    so.settimeout(30)
    last_check = time.time()
    while got < n:
        data = so.recv(1 << 20)
        assert data
        buf += data
        got += buf.count(b"\r\n")
        buf = buf[buf.rfind(b"\r\n") + 2:] if b"\r\n" in buf else buf
        if time.time() - last_check > 0.2:
            peak_seen = max(peak_seen, r.info("memory")["used_memory"] - base)
            last_check = time.time()
    t.join()
    assert r.get("ctr") == str(n)
    assert peak_seen < 16 << 20
    assert r.info("memory")["used_memory_peak"] - base < 32 << 20
    so.close()


def test_client_memory_fields(start_server):
    s = start_server()
    r = s.client()
    c = stuck_reader(s.port)
    c.sendall(b"CLIENT SETNAME slow\r\n")
    r.set("big", "y" * 200_000)
    c.sendall(b"GET big\r\n" * 20)                         # replies pile up unread
    part = socket.create_connection(("127.0.0.1", s.port))
    part.sendall(b"CLIENT SETNAME part\r\n*2\r\n$3\r\nGET\r\n$100000\r\n" + b"z" * 30_000)

    def fields(name):
        for l in r.client_list():
            if l["name"] == name:
                return l
        return None
    slow = wait_for(lambda: (lambda l: l if l and int(l["omem"]) > 1 << 20 else None)(fields("slow")))
    assert int(slow["tot-mem"]) >= int(slow["omem"])
    p = wait_for(lambda: (lambda l: l if l and int(l["qbuf"]) >= 30_000 else None)(fields("part")))
    assert int(p["qbuf-free"]) >= 0 and int(p["qbuf"]) + int(p["qbuf-free"]) < 256 * 1024
    assert int(p["tot-mem"]) >= int(p["qbuf"])
    # The server keeps draining the slow client into the kernel's socket
    # buffer, so its omem only shrinks: read INFO first, then the fields.
    info = r.info("memory")
    slow, p = fields("slow"), fields("part")
    assert info["mem_clients_normal"] >= int(slow["omem"]) + int(p["qbuf"])
    c.close()
    part.close()


def test_query_buffer_allocation_is_what_is_accounted(start_server):
    # Clients in the middle of a 10 MB bulk: each query buffer is allocated
    # a bounded amount ahead of what arrived, and CLIENT LIST (qbuf +
    # qbuf-free, tot-mem), INFO mem_clients_normal and used_memory all count
    # that allocation, not just the bytes received.
    s = start_server()
    r = s.client()
    base = r.info("memory")["used_memory"]
    socks = []
    for i in range(8):
        so = socket.create_connection(("127.0.0.1", s.port))
        so.sendall(b"CLIENT SETNAME q%d\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10000000\r\n" % i + b"x" * 200_000)
        socks.append(so)

    def lines():
        got = [l for l in r.client_list() if l["name"].startswith("q")]
        return got if len(got) == 8 and all(int(l["qbuf"]) >= 200_000 for l in got) else None
    got = wait_for(lines)
    alloc = 0
    for l in got:
        qbuf, free, tot = int(l["qbuf"]), int(l["qbuf-free"]), int(l["tot-mem"])
        assert qbuf <= 200_100
        assert qbuf + free <= 2 * qbuf + 256 * 1024, l      # bounded ahead, not 10 MB
        assert tot >= qbuf + free, l                         # tot-mem counts the allocation
        alloc += qbuf + free
    info = r.info("memory")
    assert info["mem_clients_normal"] >= alloc
    grown = info["used_memory"] - base
    assert alloc <= grown < alloc + 4 * 1024 * 1024, (alloc, grown)
    for so in socks:
        so.close()
    wait_for(lambda: not [l for l in r.client_list() if l["name"].startswith("q")])
    assert r.info("memory")["used_memory"] - base < 1024 * 1024
