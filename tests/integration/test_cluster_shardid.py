"""Redis 7.2's shard ids (issues 45/47): CLUSTER MYSHARDID, a replica in
its master's shard, CLUSTER SHARDS grouped by them, the id kept in
nodes.conf (",shard-id=<id>" after the hostname, as 7.2 writes it), and
the shard id ping extension (type 3) sent to a Redis 7.0.15 node, which
logs a warning for it and still agrees.

CLUSTER SHARDS of Redis 7.4.1 has no shard id field (its "id" is each
node's id): neither has ours.

With a live Redis 7.4.1 (utils/dev/redis74-ref.sh; skipped without one:
a transcript cannot hold a cluster), a replica of ours follows a 7.4.1
master's shard id and a 7.4.1 replica ours, over the bus both ways.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_cluster_shardid.py"""
import os
import re

import pytest

from conftest import REDIS_SERVER, SERVER
from ref74 import binary as ref74_binary
from test_cluster_bus import all_agree, create, start_node, states_ok, wait_until

HEX40 = re.compile(r"^[0-9a-f]{40}$")


def myids(node):
    c = node.client()
    return c.execute_command("CLUSTER", "MYID"), c.execute_command("CLUSTER", "MYSHARDID")


def masters_of(node):
    """id -> master id (None for a master), from CLUSTER NODES."""
    out = {}
    for line in node.client().execute_command("CLUSTER", "NODES").splitlines():
        f = line.split()
        out[f[0]] = None if f[3] == "-" else f[3]
    return out


def shard_ids_agree(nodes):
    ids = dict(myids(n) for n in nodes)
    masters = masters_of(nodes[0])
    return all(masters[i] is None or ids[i] == ids[masters[i]] for i in ids)


@pytest.mark.slow
def test_shard_ids_of_masters_and_replicas(start_server):
    nodes = [start_node(start_server) for _ in range(6)]
    create(nodes, replicas=1)
    wait_until(lambda: all_agree(nodes) and states_ok(nodes), timeout=20, what="agreement")
    wait_until(lambda: shard_ids_agree(nodes), what="replicas in their masters' shards")
    ids = dict(myids(n) for n in nodes)
    assert all(HEX40.match(s) for s in ids.values())
    masters = masters_of(nodes[0])
    assert len({ids[i] for i in ids if masters[i] is None}) == 3   # one per master
    assert len(set(ids.values())) == 3
    assert ids[nodes[0].client().execute_command("CLUSTER", "MYID")] != \
        nodes[0].client().execute_command("CLUSTER", "MYID")       # not the node id
    # CLUSTER SHARDS: one shard per master; its nodes share one shard id.
    shards = nodes[1].client().execute_command("CLUSTER", "SHARDS")
    assert len(shards) == 3
    for shard in shards:
        shard = dict(zip(shard[0::2], shard[1::2]))
        assert set(shard) == {"slots", "nodes"}                      # 7.4.1's keys: no shard "id"
        members = [dict(zip(n[0::2], n[1::2]))["id"] for n in shard["nodes"]]
        assert len(members) == 2
        assert len({ids[m] for m in members}) == 1
    # nodes.conf keeps every node's shard id, as Redis 7.2 writes it.
    with open(os.path.join(nodes[0].dir, "nodes-%d.conf" % nodes[0].cport)) as f:
        conf = f.read()
    for node_id, shard_id in ids.items():
        line = [x for x in conf.splitlines() if x.startswith(node_id + " ")][0]
        assert re.match(r"^\S+ [0-9.]+:\d+@\d+,[^ ,]*,shard-id=%s " % shard_id, line), line
    assert "shard-id" not in nodes[0].client().execute_command("CLUSTER", "NODES")


@pytest.mark.slow
def test_shard_id_survives_a_restart(start_server):
    nodes = [start_node(start_server) for _ in range(3)]
    create(nodes)
    wait_until(lambda: all_agree(nodes) and states_ok(nodes), what="agreement")
    node_id, shard_id = myids(nodes[2])
    seen = nodes[0].client().execute_command("CLUSTER", "SHARDS")
    old = nodes[2]
    old.kill()
    back = start_server(args=["--cluster-enabled", "yes", "--cluster-port", str(old.cport), "--cluster-config-file",
                              os.path.join(old.dir, "nodes-%d.conf" % old.cport)], port=old.port)
    back.cport = old.cport
    assert myids(back) == (node_id, shard_id)
    nodes[2] = back
    wait_until(lambda: all_agree(nodes) and states_ok(nodes), what="agreement after the restart")
    assert len(seen) == len(nodes[0].client().execute_command("CLUSTER", "SHARDS"))


@pytest.mark.slow
def test_mixed_cluster_with_redis_70_gets_the_extension(start_server):
    nodes = [start_node(start_server, REDIS_SERVER), start_node(start_server), start_node(start_server)]
    create(nodes)
    wait_until(lambda: all_agree(nodes) and states_ok(nodes), what="agreement with redis-server")
    # Redis 7.0.15 has no CLUSTER MYSHARDID; it received our extension,
    # warned about it, and agrees all the same.
    assert "Received unknown extension type 3" in nodes[0].read_log()
    assert "cluster_state:ok" in nodes[0].client().execute_command("CLUSTER", "INFO")
    for n in nodes[1:]:
        assert HEX40.match(myids(n)[1])


@pytest.mark.slow
def test_shard_ids_cross_with_redis_74(start_server):
    bin74 = ref74_binary()
    if not bin74:
        pytest.skip("no Redis 7.4.1 here: utils/dev/redis74-ref.sh could not build one")
    m74, ours, r74, r_ours = (start_node(start_server, b) for b in (bin74, SERVER, bin74, SERVER))
    nodes = [m74, ours, r74, r_ours]
    m74.client().execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 8191)
    ours.client().execute_command("CLUSTER", "ADDSLOTSRANGE", 8192, 16383)
    for n in nodes[1:]:
        m74.client().execute_command("CLUSTER", "MEET", "127.0.0.1", n.port, n.cport)
    wait_until(lambda: all(len(masters_of(n)) == 4 for n in nodes), what="every node known everywhere")
    r_ours.client().execute_command("CLUSTER", "REPLICATE", myids(m74)[0])
    r74.client().execute_command("CLUSTER", "REPLICATE", myids(ours)[0])
    wait_until(lambda: states_ok(nodes) and shard_ids_agree(nodes), timeout=15,
               what="replicas in their masters' shards")
    assert myids(r_ours)[1] == myids(m74)[1] and myids(r74)[1] == myids(ours)[1]
    assert myids(m74)[1] != myids(ours)[1]
    assert "unknown extension" not in m74.read_log() + r74.read_log()
