"""Cluster behaviour that redis-py 5.0.8's cluster suite depends on
(utils/tools/redis-py-cluster-suite.py; docs/cluster.md), each checked on a
cluster of ours and on one of Debian's redis-server 7.0.15, with a real
client on loopback.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_cluster_redis_py.py"""
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER
from test_cluster_bus import create, start_node, wait_until

ENGINES = [pytest.param(SERVER, id="ours"), pytest.param(REDIS_SERVER, id="redis")]


def three_masters(start_server, binary):
    nodes = [start_node(start_server, binary=binary) for _ in range(3)]
    create(nodes)
    wait_until(lambda: all(n.client().execute_command("CLUSTER", "INFO").startswith("cluster_state:ok")
                           for n in nodes), timeout=15, what="cluster_state:ok")
    return nodes


def assigned(node):
    info = node.client().execute_command("CLUSTER", "INFO")
    return int(info.split("cluster_slots_assigned:")[1].split()[0])


@pytest.mark.parametrize("binary", ENGINES)
def test_slot_deleted_by_its_owner_stays_bound_elsewhere(start_server, binary):
    """CLUSTER DELSLOTS on the owner only: the other nodes keep the slot
    bound to it (Redis's owner_not_claiming_slot), so a client that asks
    them for CLUSTER SLOTS right after the owner adds it back sees every
    slot (redis-py's test_not_require_full_coverage_cluster_down_error
    followed by a new client)."""
    nodes = three_masters(start_server, binary)
    slot = 12182  # "foo"
    owner = [n for n in nodes if n.client().execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
             and any(r[0] <= slot <= r[1] and r[2][1] == n.port
                     for r in n.client().execute_command("CLUSTER", "SLOTS"))][0]
    others = [n for n in nodes if n is not owner]
    assert owner.client().execute_command("CLUSTER", "DELSLOTS", slot) == "OK"
    with pytest.raises(redis.ResponseError, match="CLUSTERDOWN"):
        owner.client().get("foo")
    time.sleep(2.5)  # a few pings carry the owner's slots without it
    for n in others:
        assert assigned(n) == 16384
        with pytest.raises(redis.ResponseError, match="MOVED %d 127.0.0.1:%d" % (slot, owner.port)):
            n.client().get("foo")
    assert owner.client().execute_command("CLUSTER", "ADDSLOTS", slot) == "OK"
    rc = redis.cluster.RedisCluster(host="127.0.0.1", port=others[0].port, decode_responses=True)
    try:
        assert rc.set("foo", "bar") and rc.get("foo") == "bar"
    finally:
        rc.close()


@pytest.mark.parametrize("binary", ENGINES)
def test_cluster_links_pair_to_and_from_per_peer(start_server, binary):
    """CLUSTER LINKS lists, per peer, the link we opened ("to") and then the
    one it opened to us ("from"), both naming it (redis-py's
    test_cluster_links)."""
    nodes = three_masters(start_server, binary)
    ids = {n.client().execute_command("CLUSTER", "MYID"): n for n in nodes}

    def paired(node):
        links = node.client().execute_command("CLUSTER", "LINKS")
        return len(links) == 4 and all(
            links[i][1] == "to" and links[i + 1][1] == "from" and links[i][3] == links[i + 1][3]
            for i in range(0, len(links), 2))
    for n in nodes:
        wait_until(lambda: paired(n), timeout=5, what="to/from pairs",
                   show=lambda: repr(n.client().execute_command("CLUSTER", "LINKS")))
        links = n.client().execute_command("CLUSTER", "LINKS")
        me = n.client().execute_command("CLUSTER", "MYID")
        assert {x[3] for x in links} == set(ids) - {me}
        for x in links:
            assert x[0::2] == ["direction", "node", "create-time", "events", "send-buffer-allocated",
                               "send-buffer-used"]
