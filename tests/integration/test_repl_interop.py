"""Replication interop with Debian's redis-server 7.0.15: our replica of a
Redis master and a Redis replica of our master, each through a full sync
(disk and diskless forms), a random write load of every data type, and a
content comparison; a short disconnect resumes with +CONTINUE (the
master's sync_partial_ok grows, sync_full does not)."""
import pytest

from conftest import REDIS_SERVER, SERVER
from repl_helpers import (random_load, snapshot, wait_caught_up, wait_for,
                          wait_link_up)

pytestmark = pytest.mark.differential


def _pair(start_server, master_bin, replica_bin, master_args=()):
    m = start_server(args=list(master_args), binary=master_bin)
    rep = start_server(binary=replica_bin)
    return m, m.client(), rep, rep.client()


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_our_replica_of_redis(start_server, diskless):
    m, rm, s, rs = _pair(start_server, REDIS_SERVER, SERVER,
                         ["--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0"])
    random_load(rm, 800, seed=1)          # in the RDB
    assert rs.replicaof("127.0.0.1", m.port)
    wait_link_up(rs)
    random_load(rm, 1500, seed=2)         # in the stream
    wait_caught_up(rm, rs)
    assert rm.dbsize() > 50
    assert snapshot(rs) == snapshot(rm)
    assert rs.role()[0] == "slave" and rs.role()[3] == "connected"
    # The master sees our ACKs.
    assert rm.wait(1, 5000) == 1


@pytest.mark.parametrize("diskless", ["no", "yes"])
def test_redis_replica_of_ours(start_server, diskless):
    m, rm, s, rs = _pair(start_server, SERVER, REDIS_SERVER,
                         ["--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0"])
    random_load(rm, 800, seed=3)
    assert rs.replicaof("127.0.0.1", m.port)
    wait_link_up(rs)
    random_load(rm, 1500, seed=4)
    wait_caught_up(rm, rs)
    assert snapshot(rs) == snapshot(rm)
    info = rm.info("replication")
    assert info["connected_slaves"] == 1
    assert info["slave0"]["state"] == "online" and info["slave0"]["port"] == s.port
    assert rm.wait(1, 5000) == 1
    assert rm.role()[2][0][1] == str(s.port)


def _partial_after_kill(master, replica_client, load_seed):
    """Cut the replica's link, write meanwhile, expect +CONTINUE."""
    before = master.info("stats")
    assert replica_client.client_kill_filter(_type="master") == 1
    random_load(master, 300, seed=load_seed)
    wait_link_up(replica_client)
    wait_caught_up(master, replica_client)
    after = master.info("stats")
    assert after["sync_partial_ok"] == before["sync_partial_ok"] + 1
    assert after["sync_full"] == before["sync_full"]


@pytest.mark.parametrize("master_bin,replica_bin", [(SERVER, SERVER), (SERVER, REDIS_SERVER), (REDIS_SERVER, SERVER)],
                         ids=["ours-ours", "ours-redis", "redis-ours"])
def test_short_disconnect_resumes_with_continue(start_server, master_bin, replica_bin):
    m, rm, s, rs = _pair(start_server, master_bin, replica_bin, ["--repl-diskless-sync-delay", "0"])
    random_load(rm, 300, seed=5)
    rs.replicaof("127.0.0.1", m.port)
    wait_link_up(rs)
    _partial_after_kill(rm, rs, load_seed=6)
    assert snapshot(rs) == snapshot(rm)


def test_replica_keeps_expired_keys_until_master_deletes(start_server):
    m, rm, s, rs = _pair(start_server, SERVER, SERVER, ["--repl-diskless-sync-delay", "0"])
    rs.replicaof("127.0.0.1", m.port)
    wait_link_up(rs)
    rm.set("gone", "v", px=300)
    wait_caught_up(rm, rs)
    wait_for(lambda: rs.get("gone") is None, 5, what="logical expiry on the replica")
    # Still there until the master's DEL arrives (the master has not
    # looked at the key yet, and its active cycle may not have either).
    rm.get("gone")   # the master expires it now and sends DEL
    wait_caught_up(rm, rs)
    assert rs.execute_command("DBSIZE") == rm.dbsize()


def test_sync_command_and_rdb_only(start_server):
    """SYNC (old tools, redis-cli --rdb) sends the RDB payload."""
    import socket
    m = start_server()
    rm = m.client()
    rm.set("a", "1")
    with socket.create_connection(("127.0.0.1", m.port), timeout=10) as sock:
        sock.sendall(b"REPLCONF rdb-only 1\r\n")
        assert sock.recv(100) == b"+OK\r\n"
        sock.sendall(b"SYNC\r\n")
        data = b""
        while True:   # newlines keep the link alive until the RDB is ready
            chunk = sock.recv(65536)
            assert chunk, "closed before the payload"
            data += chunk
            data = data.lstrip(b"\n")
            if b"\r\n" in data:
                break
        hdr, body = data.split(b"\r\n", 1)
        assert hdr.startswith(b"$")
        size = int(hdr[1:])
        while len(body) < size:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        assert body[:5] == b"REDIS" and len(body) == size
        sock.settimeout(10)
        assert sock.recv(100) == b""   # rdb-only: closed after the payload
