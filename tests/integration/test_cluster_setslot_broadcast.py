"""CLUSTER SETSLOT <slot> NODE <myself> that ends an import bumps the
importing node's config epoch and tells every other node at once (a PONG
to all, as Redis 7.0.15 does), so a third node, and a client refreshing
its slot map from it, sees the new owner right away rather than after
the next gossip round (found with ioredis' cluster suite: a sharded
subscriber that followed a MOVED refreshed its map from a node that still
named the old owner).  Checked on ours and on Debian's redis-server 7.0.15."""
import time

import pytest

from conftest import REDIS_SERVER, SERVER
from test_cluster_bus import create, start_node, wait_until

pytestmark = [pytest.mark.differential, pytest.mark.slow]


def owner_seen_by(node, slot):
    for start, end, master, *_ in node.client().execute_command("CLUSTER", "SLOTS"):
        if start <= slot <= end:
            return master[1]
    return None


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_import_end_reaches_other_nodes_at_once(start_server, binary):
    # A long node timeout: the ordinary gossip to each node is rare.
    nodes = [start_node(start_server, binary=binary, timeout_ms=30000) for _ in range(3)]
    create(nodes)
    a, b, c = nodes
    ids = {n.port: n.client().execute_command("CLUSTER", "MYID") for n in nodes}
    wait_until(lambda: all(n.client().execute_command("CLUSTER", "INFO").find("cluster_state:ok") >= 0
                           for n in nodes), 30, "cluster_state:ok")
    slot = 0  # a's, empty
    assert owner_seen_by(c, slot) == a.port
    # Let the gossip of the creation settle, so that none is due right now.
    time.sleep(1.5)
    assert b.client().execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[a.port]) == "OK"
    assert a.client().execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[b.port]) == "OK"
    assert a.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", ids[b.port]) == "OK"
    t0 = time.monotonic()
    assert b.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", ids[b.port]) == "OK"
    wait_until(lambda: owner_seen_by(c, slot) == b.port, 10, "the third node sees the new owner")
    took = time.monotonic() - t0
    assert took < 0.3, "the third node learnt the new owner after %.3f s" % took
