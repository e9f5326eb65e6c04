"""A replica's stream and its clients around two state changes, as Redis
7.0.15 handles them, each case on our server and on redis-server (each as
master and replica of its own kind): while a script on the replica runs
past busy-reply-threshold, the master's stream waits, read but not applied
(it was refused with -BUSY, and the replica lost those writes), and is
applied once the script ends; a master that turns replica lets its clients
blocked on keys go with -UNBLOCKED and closes them (a BLPOP left waiting
would pop what its new master pushes, and the two would differ); PSYNC
with an offset that is not a number answers Redis's error first."""
import socket
import threading
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER
from repl_helpers import wait_for

pytestmark = pytest.mark.differential

BOTH = pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])


def link_up(c):
    return c.info("replication").get("master_link_status") == "up"


@BOTH
def test_master_stream_waits_for_a_busy_script(start_server, binary):
    master = start_server(binary=binary)
    replica = start_server(args=["--busy-reply-threshold", "100"], binary=binary)
    m, r = master.client(), replica.client()
    r.execute_command("REPLICAOF", "127.0.0.1", master.port)
    wait_for(lambda: link_up(r), timeout=20)
    done = []
    t = threading.Thread(target=lambda: done.append(
        replica.client(socket_timeout=60).eval("local t = redis.call('time')[1] "
                                               "while redis.call('time')[1] - t < 2 do end return 1", 0)))
    t.start()
    probe = replica.client()
    wait_for(lambda: _busy(probe), timeout=10)
    for i in range(200):
        m.set("k%d" % i, i)
    m.incrby("counter", 200)
    t.join(30)
    assert done == [1]
    wait_for(lambda: r.info("replication")["slave_repl_offset"] == m.info("replication")["master_repl_offset"],
             timeout=20)
    assert r.get("counter") == "200" and r.get("k199") == "199"
    assert r.dbsize() == m.dbsize() == 201


def _busy(c):
    try:
        c.ping()
        return False
    except redis.ResponseError as e:
        return str(e).startswith("BUSY")


@BOTH
def test_blocked_clients_of_a_master_turned_replica_are_let_go(start_server, binary):
    a = start_server(binary=binary)
    b = start_server(binary=binary)
    ca, cb = a.client(), b.client()
    blocked = b.client(socket_timeout=10)
    result = []

    def blpop():
        try:
            result.append(blocked.blpop("foo", 0))
        except redis.ResponseError as e:
            result.append(str(e))
        except redis.ConnectionError as e:
            result.append("closed: %s" % e)

    t = threading.Thread(target=blpop)
    t.start()
    wait_for(lambda: cb.info("clients")["blocked_clients"] == 1, timeout=5)
    cb.execute_command("REPLICAOF", "127.0.0.1", a.port)
    t.join(10)
    assert result and result[0].startswith("UNBLOCKED force unblock from blocking operation, instance state changed")
    wait_for(lambda: link_up(cb), timeout=20)
    ca.rpush("foo", "a", "b", "c")
    wait_for(lambda: cb.lrange("foo", 0, -1) == ["a", "b", "c"], timeout=10)
    time.sleep(0.1)
    assert ca.lrange("foo", 0, -1) == ["a", "b", "c"]
    # the unblocked client was closed
    wait_for(lambda: not any(x["cmd"] == "blpop" for x in cb.client_list()), timeout=5)


@BOTH
def test_psync_with_an_offset_that_is_not_a_number(start_server, binary):
    s = start_server(binary=binary)
    with socket.create_connection(("127.0.0.1", s.port), timeout=5) as conn:
        conn.sendall(b"*3\r\n$5\r\nPSYNC\r\n$13\r\nreplicationid\r\n$10\r\noffset_str\r\n")
        first = b""
        while b"\r\n" not in first:
            first += conn.recv(4096)
        assert first.split(b"\r\n")[0] == b"-ERR value is not an integer or out of range"
        # no full sync follows: the connection is still an ordinary client
        # (Redis 7.0.15's fix; its suite checks it in TLS mode too)
        conn.sendall(b"PING\r\n")
        rest = first.split(b"\r\n", 1)[1]
        while b"\r\n" not in rest:
            rest += conn.recv(4096)
        assert rest == b"+PONG\r\n"
