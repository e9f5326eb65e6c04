"""bind-source-addr against Debian's redis-server 7.0.15: a replica's link
to its master leaves from that address (the master's CLIENT LIST shows
it), one that cannot be bound is skipped (best effort), CONFIG SET takes
effect at the next connect, and MIGRATE does not use it (Redis 7.0's
doesn't).  Also the protected mode both servers share: a client from
127.0.0.2 is not "local" (only 127.0.0.1, ::1 and unix sockets are).

Every address here is a loopback one: the source 127.0.0.2 is in
127.0.0.0/8, and every connection goes to 127.0.0.1."""
import pytest

from conftest import REDIS_SERVER, SERVER
from repl_helpers import wait_for, wait_link_up

pytestmark = pytest.mark.differential

BINARIES = [SERVER, REDIS_SERVER]
IDS = ["ours", "redis"]


def replica_peer(master):
    """The address the master sees its one replica's link come from."""
    wait_for(lambda: any("S" in c["flags"] for c in master.client_list()), what="a replica's link")
    (entry,) = [c for c in master.client_list() if "S" in c["flags"]]
    return entry["addr"].rsplit(":", 1)[0]


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_replica_link_leaves_from_the_source_address(start_server, binary):
    m = start_server(["--protected-mode", "no"], binary=binary)
    r = start_server(["--bind-source-addr", "127.0.0.2", "--replicaof", "127.0.0.1", str(m.port)], binary=binary)
    mc, rc = m.client(), r.client()
    assert rc.config_get("bind-source-addr") == {"bind-source-addr": "127.0.0.2"}
    wait_link_up(rc)
    assert replica_peer(mc) == "127.0.0.2"
    # another family cannot be bound: the kernel chooses, the link still comes up
    rc.config_set("bind-source-addr", "::1")
    rc.replicaof("no", "one")
    rc.replicaof("127.0.0.1", m.port)
    wait_link_up(rc)
    assert replica_peer(mc) == "127.0.0.1"
    # "" is no source address, as the default
    rc.config_set("bind-source-addr", "")
    assert rc.config_get("bind-source-addr") == {"bind-source-addr": ""}


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_protected_master_refuses_a_replica_from_127_0_0_2(start_server, binary):
    m = start_server([], binary=binary)
    r = start_server(["--bind-source-addr", "127.0.0.2", "--replicaof", "127.0.0.1", str(m.port)], binary=binary)
    wait_for(lambda: "protected mode" in r.read_log(), what="the master's DENIED reply in the replica's log")
    assert r.client().info("replication")["master_link_status"] == "down"
    # the same replica from 127.0.0.1 is let in
    rc = r.client()
    rc.config_set("bind-source-addr", "127.0.0.1")
    rc.replicaof("no", "one")
    rc.replicaof("127.0.0.1", m.port)
    wait_link_up(rc)


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_migrate_does_not_use_it(start_server, binary):
    src = start_server(["--bind-source-addr", "127.0.0.2"], binary=binary)
    dst = start_server([], binary=binary)  # protected: 127.0.0.2 would be refused
    sc, dc = src.client(), dst.client()
    sc.set("k", "v")
    with dc.monitor() as mon:
        assert sc.execute_command("MIGRATE", "127.0.0.1", dst.port, "k", 0, 5000, "COPY") == "OK"
        seen = mon.next_command()
        while not seen["command"].startswith("RESTORE"):
            seen = mon.next_command()
    assert seen["client_address"] == "127.0.0.1"
    assert dc.get("k") == "v"


def test_config_errors_equal(start_server):
    """Any string is taken, as Redis takes it (it is resolved at connect)."""
    for binary in BINARIES:
        c = start_server(binary=binary).client()
        assert c.config_set("bind-source-addr", "not-an-address") is True
        assert c.config_get("bind-source-addr") == {"bind-source-addr": "not-an-address"}
