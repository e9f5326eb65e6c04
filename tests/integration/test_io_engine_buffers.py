"""The io_uring engine's receive buffer ring as memory (issue 49,
src/io_uring_engine.c "Receive buffers' memory"): it starts small, grows
under pipelined bursts, gives its pages back after a quiet second and
shrinks back a few seconds later; INFO names it (mem_io_buffers) and
mem_fragmentation_ratio leaves it out.  The figures are checked against
the kernel's own count of the server's pages (/proc/<pid>/status)."""
import socket
import threading
import time

import pytest

from conftest import memory_stats

MIN_BUFFERS = 16
BUF_SIZE = 16 * 1024


def vm_rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def pipeline_burst(port, nbytes):
    """Send nbytes of SETs in one write loop, then read every reply."""
    cmd = b"*3\r\n$3\r\nSET\r\n$17\r\nburst:key:%07d\r\n$3\r\nabc\r\n"
    n = nbytes // len(cmd % 0)
    payload = b"".join(cmd % (i % 1000) for i in range(n))
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.settimeout(30)
        reader_done = []

        def read_all():
            want, got = n * len(b"+OK\r\n"), 0
            while got < want:
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                got += len(chunk)
            reader_done.append(got)

        t = threading.Thread(target=read_all)
        t.start()
        s.sendall(payload)
        t.join(30)
        assert reader_done and reader_done[0] == n * 5


def wait_for(pred, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.2)
    return pred()


@pytest.fixture
def uring(start_server):
    s = start_server(args=("--io-engine", "io_uring"))
    if s.client().info("server")["io_engine"] != "io_uring":
        pytest.skip("no io_uring here")  # the engine test covers the fallback
    return s


@pytest.mark.slow
def test_ring_starts_small_grows_under_burst_and_gives_back(uring):
    r = uring.client()
    time.sleep(0.3)  # the first cron tick samples mem_io_buffers
    info = r.info()
    assert info["io_uring_buffers_active"] == MIN_BUFFERS
    assert info["mem_io_buffers"] > 0
    assert info["mem_io_buffers"] < MIN_BUFFERS * BUF_SIZE + 512 * 1024

    threads = [threading.Thread(target=pipeline_burst, args=(uring.port, 8 << 20)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    time.sleep(0.3)  # a cron tick samples mem_io_buffers
    info = r.info()
    assert info["io_uring_buffer_grows"] >= 1
    assert info["io_uring_buffers_active"] > MIN_BUFFERS
    io_busy = info["mem_io_buffers"]
    assert io_busy > 1 << 20, io_busy
    rss_busy = vm_rss(uring.proc.pid)

    # A quiet second gives the pages back; the count halves after a few.
    assert wait_for(lambda: r.info("stats")["io_uring_buffer_releases"] >= 1, 5)
    assert wait_for(lambda: r.info("stats")["io_uring_buffers_active"] == MIN_BUFFERS, 15)
    time.sleep(1.3)  # one more quiet second after the INFO calls above
    info = r.info()
    assert info["mem_io_buffers"] < 512 * 1024, info["mem_io_buffers"]
    assert info["io_uring_buffer_shrinks"] >= 1
    released = io_busy - info["mem_io_buffers"]
    # The kernel agrees: the process shrank by (at least most of) it.
    assert rss_busy - vm_rss(uring.proc.pid) > released * 0.8


def test_fragmentation_ratio_leaves_the_io_buffers_out(uring):
    r = uring.client()
    threads = [threading.Thread(target=pipeline_burst, args=(uring.port, 8 << 20)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    r.flushall()
    time.sleep(0.3)
    info = r.info("memory")
    io = info["mem_io_buffers"]
    assert io > 1 << 20
    # mem_fragmentation_bytes = rss - io buffers - used_memory, from one
    # cron sample; used_memory moves by at most a few KB between them here.
    expect = info["used_memory_rss"] - io - info["used_memory"]
    assert abs(info["mem_fragmentation_bytes"] - expect) < 256 * 1024, (info["mem_fragmentation_bytes"], expect)
    # MEMORY PURGE gives the buffers' pages back at once.
    r.memory_purge()
    assert r.info("memory")["mem_io_buffers"] < 512 * 1024
    stats = memory_stats(r)
    assert "io.buffers" in stats


def test_epoll_has_no_io_buffers(start_server):
    r = start_server(args=("--io-engine", "epoll")).client()
    assert r.info("memory")["mem_io_buffers"] == 0
