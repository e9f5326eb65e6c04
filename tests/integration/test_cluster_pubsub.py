"""Pub/Sub over the cluster bus (issue 45): SPUBLISH reaching the
SSUBSCRIBE subscribers of every node of the channel's shard through
PUBLISHSHARD messages, in shards mixing our nodes and Debian's
redis-server 7.0.15 both ways and in one of ours only; subscribers told
`sunsubscribe` when their slot moves away; the links (CLUSTER LINKS both
ways, cluster-link-sendbuf-limit freeing a link whose peer stopped
reading); MODULE messages dropped; Redis 7.2's forgotten-node extension
obeyed.

Every node has its own free port and bus port on 127.0.0.1 and is stopped
by its pid (a stopped one is resumed by its pid too).

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_cluster_pubsub.py"""
import os
import signal
import time

import pytest
import redis
from redis.crc import key_slot

from conftest import REDIS_SERVER, SERVER
from test_cluster_bus import create, start_node, wait_until

# About a minute of cluster set-ups: in `make test` only, not again in the
# epoll and sanitizer passes of .ci/run (the bus parser has its fuzz target).
pytestmark = pytest.mark.slow


def node_id(n):
    return n.client().execute_command("CLUSTER", "MYID")


def myself_line(n):
    return [line for line in n.client().execute_command("CLUSTER", "NODES").splitlines() if "myself" in line][0]


def channel_in(lo, hi, prefix="ch"):
    """A channel name whose slot is in lo..hi."""
    for i in range(100000):
        name = "%s%d" % (prefix, i)
        if lo <= key_slot(name.encode()) <= hi:
            return name
    raise AssertionError("no channel in %d-%d" % (lo, hi))


class Sub:
    """One raw connection in subscribed mode (redis-py 4.3 has no
    SSUBSCRIBE of its own)."""

    def __init__(self, node, *channels, readonly=False):
        self.conn = redis.Connection(host="127.0.0.1", port=node.port, decode_responses=True)
        self.conn.connect()
        if readonly:
            self.conn.send_command("READONLY")
            assert self.conn.read_response() == "OK"
        self.conn.send_command("SSUBSCRIBE", *channels)
        for ch in channels:
            frame = self.conn.read_response()
            assert frame[:2] == ["ssubscribe", ch], frame

    def frames(self, n, timeout=5.0):
        got = []
        t0 = time.monotonic()
        while len(got) < n and time.monotonic() - t0 < timeout:
            if self.conn.can_read(timeout=0.2):
                got.append(self.conn.read_response())
        return got

    def quiet(self, wait=0.5):
        return not self.conn.can_read(timeout=wait)

    def close(self):
        self.conn.disconnect()


SHARDS = [(0, 5460), (5461, 10922), (10923, 16383)]  # redis-cli --cluster create's split of 3 masters


def mixed_shards(start_server):
    """Masters ours, Redis, ours; their replicas Redis, ours, ours: a shard
    of our master with a Redis replica, one of a Redis master with our
    replica, one of ours only.  Returns [(master, replica)] in slot order."""
    masters = [start_node(start_server, SERVER), start_node(start_server, REDIS_SERVER), start_node(start_server, SERVER)]
    replicas = [start_node(start_server, REDIS_SERVER), start_node(start_server, SERVER), start_node(start_server, SERVER)]
    create(masters)
    for r, m in zip(replicas, masters):
        r.client().execute_command("CLUSTER", "MEET", "127.0.0.1", m.port, m.cport)
    mid = [node_id(m) for m in masters]
    everyone = masters + replicas

    def met():
        return all(all(i in n.client().execute_command("CLUSTER", "NODES") for i in mid) for n in replicas)
    wait_until(met, timeout=15, what="the replicas meeting the cluster")
    for r, i in zip(replicas, mid):
        r.client().execute_command("CLUSTER", "REPLICATE", i)

    def settled():
        for n in everyone:
            lines = n.client().execute_command("CLUSTER", "NODES").splitlines()
            if len(lines) != 6 or sum(" slave " in line or ",slave " in line for line in lines) != 3:
                return False
            if not n.client().execute_command("CLUSTER", "INFO").startswith("cluster_state:ok"):
                return False
        return True
    wait_until(settled, timeout=20, what="six nodes, three replicas",
               show=lambda: "\n".join(n.client().execute_command("CLUSTER", "NODES") for n in everyone))
    return list(zip(masters, replicas))


def test_spublish_reaches_the_shard_in_mixed_and_own_shards(start_server):
    shards = mixed_shards(start_server)
    for (master, replica), (lo, hi) in zip(shards, SHARDS):
        ch = channel_in(lo, hi)
        # A replica serves SSUBSCRIBE without READONLY (Redis 7.0), a node
        # of another shard redirects it.
        subs = [Sub(master, ch), Sub(replica, ch)]
        other = shards[(SHARDS.index((lo, hi)) + 1) % 3][0]
        with pytest.raises(redis.ResponseError, match="MOVED %d " % key_slot(ch.encode())):
            other.client().execute_command("SPUBLISH", ch, "x")
        # From the master, then from the replica: both subscribers hear it.
        assert master.client().execute_command("SPUBLISH", ch, "from master") == 1
        assert replica.client().execute_command("SPUBLISH", ch, "from replica") == 1
        for s in subs:
            got = s.frames(2)
            assert sorted(m[2] for m in got) == ["from master", "from replica"], (ch, got)
            assert all(m[:2] == ["smessage", ch] for m in got)
        # PUBLISH is not SPUBLISH: a shard subscriber hears nothing of it.
        master.client().publish(ch, "plain")
        assert all(s.quiet() for s in subs)
        for s in subs:
            s.close()
    # Other shards hear nothing of a shard's messages: a plain SUBSCRIBE on
    # every node sees PUBLISH only.
    ch = channel_in(*SHARDS[0])
    plain = []
    for m, r in shards:
        for n in (m, r):
            p = n.client().pubsub()
            p.subscribe(ch)
            assert p.get_message(timeout=2)["type"] == "subscribe"
            plain.append(p)
    shards[0][0].client().execute_command("SPUBLISH", ch, "sharded")
    shards[1][1].client().publish(ch, "everyone")
    for p in plain:
        got = []
        t0 = time.monotonic()
        while time.monotonic() - t0 < 2:
            m = p.get_message(timeout=0.2)
            if m and m["type"] == "message":
                got.append(m["data"])
        assert got == ["everyone"]
        p.close()


def move_slot(slot, src, dst):
    """An empty slot from src to dst, as redis-cli --cluster reshard does it."""
    sid, did = node_id(src), node_id(dst)
    dst.client().execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", sid)
    src.client().execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", did)
    dst.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", did)
    src.client().execute_command("CLUSTER", "SETSLOT", slot, "NODE", did)


def test_shard_subscribers_are_unsubscribed_when_their_slot_moves(start_server):
    shards = mixed_shards(start_server)
    # Our master's slot goes to the Redis master, the Redis master's to ours.
    for (src, src_replica), (dst, _), (lo, hi) in [(shards[0], shards[1], SHARDS[0]), (shards[1], shards[2], SHARDS[1])]:
        gone, stays = channel_in(lo, hi, "gone"), None
        for i in range(100000):
            name = "stays%d" % i
            if lo <= key_slot(name.encode()) <= hi and key_slot(name.encode()) != key_slot(gone.encode()):
                stays = name
                break
        subs = [Sub(src, gone), Sub(src_replica, gone)]
        kept = [Sub(src, stays), Sub(src_replica, stays)]
        move_slot(key_slot(gone.encode()), src, dst)
        for s in subs:
            got = s.frames(1, timeout=15)  # a replica learns it from the next PING (node timeout / 2 at most)
            assert got == [["sunsubscribe", gone, 0]], got
            assert s.quiet()
            s.close()
        # A channel of another slot stays, on both nodes.
        assert all(s.quiet(0.1) for s in kept)
        assert src.client().execute_command("SPUBLISH", stays, "still") == 1
        for s in kept:
            assert s.frames(1) == [["smessage", stays, "still"]]
            s.close()
        # The moved channel is now served by the new owner's shard.
        with pytest.raises(redis.ResponseError, match="MOVED"):
            src.client().execute_command("SPUBLISH", gone, "x")
        assert dst.client().execute_command("SPUBLISH", gone, "x") == 0


def links(n):
    out = []
    for flat in n.client().execute_command("CLUSTER", "LINKS"):
        out.append(flat if isinstance(flat, dict) else dict(zip(flat[::2], flat[1::2])))
    return out


def test_cluster_links_both_directions(start_server):
    """Ours and Redis 7.0.15 side by side: a link to and one from every peer."""
    nodes = [start_node(start_server), start_node(start_server), start_node(start_server, REDIS_SERVER)]
    create(nodes)
    ids = [node_id(n) for n in nodes]
    for me in (0, 2):
        peers = [i for k, i in enumerate(ids) if k != me]

        def both_ways():
            got = sorted((link["direction"], link["node"]) for link in links(nodes[me]))
            return got == sorted([("to", p) for p in peers] + [("from", p) for p in peers])
        wait_until(both_ways, what="links to and from both peers", show=lambda: repr(links(nodes[me])))
        for link in links(nodes[me]):
            assert list(link) == ["direction", "node", "create-time", "events", "send-buffer-allocated",
                                  "send-buffer-used"]
            assert link["send-buffer-used"] <= link["send-buffer-allocated"]
        assert nodes[me].client().info("memory")["mem_cluster_links"] > 0
    info = nodes[0].client().execute_command("CLUSTER", "INFO")
    assert "total_cluster_links_buffer_limit_exceeded:0" in info


@pytest.mark.slow
@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_sendbuf_limit_frees_a_stuck_link(start_server, binary):
    """The node whose link overflows is ours, or Redis 7.0.15 (the spec),
    with two of ours as peers."""
    nodes = [start_node(start_server, binary, timeout_ms=20000)] + [start_node(start_server, timeout_ms=20000)
                                                                   for _ in range(2)]
    create(nodes)
    wait_until(lambda: all(n.client().execute_command("CLUSTER", "INFO").startswith("cluster_state:ok")
                           for n in nodes), what="cluster ok")
    a, b = nodes[0], nodes[1]
    bid = node_id(b)
    a.client().config_set("cluster-link-sendbuf-limit", 1 << 20)
    info = a.client().execute_command("CLUSTER", "INFO")
    assert "total_cluster_links_buffer_limit_exceeded:0" in info
    wait_until(lambda: any(link["node"] == bid and link["direction"] == "to" for link in links(a)), what="a link to b")
    before = [link["create-time"] for link in links(a) if link["node"] == bid and link["direction"] == "to"][0]
    os.kill(b.pid, signal.SIGSTOP)
    try:
        big = "x" * (512 * 1024)
        for _ in range(40):  # 20 MB: more than the sockets of a stopped peer hold
            a.client().publish("bulk", big)

        def exceeded():
            info = a.client().execute_command("CLUSTER", "INFO")
            return "total_cluster_links_buffer_limit_exceeded:0" not in info
        wait_until(exceeded, timeout=5, what="the limit exceeded",
                   show=lambda: repr(links(a)))
        for link in links(a):
            assert link["send-buffer-allocated"] <= (1 << 20) + 600 * 1024 or link["node"] != bid
    finally:
        os.kill(b.pid, signal.SIGCONT)

    def recreated():
        ls = [link for link in links(a) if link["node"] == bid and link["direction"] == "to"]
        return ls and ls[0]["create-time"] > before
    wait_until(recreated, timeout=10, what="the link re-created", show=lambda: repr(links(a)))
    wait_until(lambda: all(n.client().execute_command("CLUSTER", "INFO").startswith("cluster_state:ok")
                           for n in nodes), what="cluster ok again")
    assert "connected" in [line for line in a.client().execute_command("CLUSTER", "NODES").splitlines()
                           if line.startswith(bid)][0]


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_module_messages_are_dropped_silently(start_server, binary):
    """A node with no modules drops MODULE messages (well-formed or with a
    lying length) and keeps the link: the PING after them is answered."""
    from test_cluster_bus import HEADER_LEN, ping_header
    import socket
    import struct
    node = start_node(start_server, binary)
    me = node_id(node).encode()
    payload = b"hello module"
    good = ping_header(HEADER_LEN + 13 + len(payload), msgtype=9) + struct.pack("!QIB", 7, len(payload), 1) + payload
    lying = ping_header(HEADER_LEN + 13 + 4, msgtype=9) + struct.pack("!QIB", 7, 4000, 1) + b"abcd"
    s = socket.create_connection(("127.0.0.1", node.cport), timeout=2)
    s.sendall(good + lying + ping_header(HEADER_LEN))
    got = b""
    t0 = time.monotonic()
    while len(got) < HEADER_LEN and time.monotonic() - t0 < 3:
        got += s.recv(65536)
    s.close()
    assert got[:4] == b"RCmb" and struct.unpack_from("!H", got, 12)[0] == 1 and got[40:80] == me  # a PONG
    info = node.client().execute_command("CLUSTER", "INFO")
    assert "cluster_stats_messages_module_received:2" in info
    assert node.client().ping()


def test_forgotten_node_extension_is_obeyed_for_its_ttl(start_server):
    """Redis 7.2's forgotten-node PING extension (7.0.15 has none; we obey
    it, never send it): a PING from a known node naming another makes us
    forget that one for the TTL it carries, after which gossip brings it
    back.  The PING is B's, forged with B's own slots and epoch so nothing
    else changes."""
    from test_cluster_bus import HEADER_LEN, ping_header
    import socket
    import struct
    nodes = [start_node(start_server) for _ in range(3)]
    create(nodes)
    extra = start_node(start_server)
    extra.client().execute_command("CLUSTER", "MEET", "127.0.0.1", nodes[0].port, nodes[0].cport)
    a, b = nodes[0], nodes[1]
    eid, bid = node_id(extra), node_id(b)
    wait_until(lambda: all(eid in n.client().execute_command("CLUSTER", "NODES") for n in nodes), timeout=15,
               what="everyone knowing the extra node")
    bline = [line for line in a.client().execute_command("CLUSTER", "NODES").splitlines() if line.startswith(bid)][0]
    f = bline.split()
    bitmap = bytearray(2048)
    for r in f[8:]:
        lo, hi = (int(x) for x in r.split("-")) if "-" in r else (int(r), int(r))
        for s in range(lo, hi + 1):
            bitmap[s >> 3] |= 1 << (s & 7)
    ext = struct.pack("!IHH", 56, 2, 0) + eid.encode() + struct.pack("!Q", 4)
    h = bytearray(ping_header(HEADER_LEN + len(ext), sender=bid.encode()))
    struct.pack_into("!H", h, 10, b.port)
    current = int(a.client().execute_command("CLUSTER", "INFO").split("cluster_current_epoch:")[1].split()[0])
    struct.pack_into("!QQ", h, 16, current, int(f[6]))
    h[80:2128] = bitmap
    struct.pack_into("!H", h, 2214, 1)
    struct.pack_into("!HHH", h, 2246, 0, b.cport, 1)
    h[2253] = 4  # the extensions flag
    s = socket.create_connection(("127.0.0.1", a.cport), timeout=2)
    s.sendall(bytes(h) + ext)
    wait_until(lambda: eid not in a.client().execute_command("CLUSTER", "NODES"), timeout=3,
               what="the extra node forgotten")
    s.close()
    t0 = time.monotonic()
    # Gossip from the others does not bring it back within the TTL ...
    while time.monotonic() - t0 < 1.5:
        assert eid not in a.client().execute_command("CLUSTER", "NODES")
        time.sleep(0.1)
    # ... and does after it; the slots never moved.
    wait_until(lambda: eid in a.client().execute_command("CLUSTER", "NODES"), timeout=15,
               what="the extra node met again")
    assert [line for line in a.client().execute_command("CLUSTER", "NODES").splitlines()
            if line.startswith(bid)][0].split()[8:] == f[8:]


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_shard_channels_while_the_cluster_is_down(start_server, binary):
    """A node serving slots 0-1000 only is down (full coverage required):
    shard channels are still served, unless
    cluster-allow-pubsubshard-when-down is no; keys are not."""
    node = start_node(start_server, binary)
    c = node.client()
    c.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 1000)
    wait_until(lambda: "cluster_state:fail" in c.execute_command("CLUSTER", "INFO"), what="cluster down")
    ch = channel_in(0, 1000)
    with pytest.raises(redis.ResponseError, match="CLUSTERDOWN The cluster is down"):
        c.get(ch)
    assert c.execute_command("SPUBLISH", ch, "m") == 0
    sub = Sub(node, ch)
    assert c.execute_command("SPUBLISH", ch, "m") == 1
    assert sub.frames(1) == [["smessage", ch, "m"]]
    sub.close()
    c.config_set("cluster-allow-pubsubshard-when-down", "no")
    with pytest.raises(redis.ResponseError, match="CLUSTERDOWN The cluster is down"):
        c.execute_command("SPUBLISH", ch, "m")
    with pytest.raises(redis.ResponseError, match="CLUSTERDOWN The cluster is down"):
        Sub(node, ch)
    # A channel of a slot nobody serves: not served, whatever the setting.
    c.config_set("cluster-allow-pubsubshard-when-down", "yes")
    with pytest.raises(redis.ResponseError, match="CLUSTERDOWN Hash slot not served"):
        c.execute_command("SPUBLISH", channel_in(2000, 3000), "m")


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_shard_channels_of_a_migrating_slot_stay_on_the_source(start_server, binary):
    nodes = [start_node(start_server, binary) for _ in range(3)]
    create(nodes)
    wait_until(lambda: all(n.client().execute_command("CLUSTER", "INFO").startswith("cluster_state:ok")
                           for n in nodes), what="cluster ok")
    src, dst = nodes[0], nodes[1]
    ch = channel_in(*SHARDS[0])
    slot = key_slot(ch.encode())
    dst.client().execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", node_id(src))
    src.client().execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", node_id(dst))
    # A missing key of the slot is sent on with ASK; its channels stay here.
    with pytest.raises(redis.ResponseError, match="ASK %d " % slot):
        src.client().get(ch)
    sub = Sub(src, ch)
    assert src.client().execute_command("SPUBLISH", ch, "m") == 1
    assert sub.frames(1) == [["smessage", ch, "m"]]
    sub.close()
    # The target serves them only when asked (ASKING), as keys.
    with pytest.raises(redis.ResponseError, match="MOVED %d " % slot):
        dst.client().execute_command("SPUBLISH", ch, "m")
    conn = redis.Connection(host="127.0.0.1", port=dst.port, decode_responses=True)
    conn.send_command("ASKING")
    assert conn.read_response() == "OK"
    conn.send_command("SPUBLISH", ch, "m")
    assert conn.read_response() == 0
    conn.disconnect()


@pytest.mark.slow
def test_a_failover_keeps_the_new_masters_subscribers_and_drops_the_old_ones(start_server):
    """CLUSTER FAILOVER in a shard of our master and a Redis replica, and in
    one of a Redis master and our replica: as in Redis 7.0, the promoted
    replica's shard subscribers stay, the old master's get sunsubscribe
    (its slots left it)."""
    shards = mixed_shards(start_server)
    for (master, replica), (lo, hi) in list(zip(shards, SHARDS))[:2]:
        ch = channel_in(lo, hi)
        on_master, on_replica = Sub(master, ch), Sub(replica, ch)
        replica.client().execute_command("CLUSTER", "FAILOVER")
        wait_until(lambda: "master" in myself_line(replica).split()[2] and "slave" in myself_line(master).split()[2],
                   timeout=15, what="the replica promoted")
        assert on_master.frames(1, timeout=10) == [["sunsubscribe", ch, 0]]
        assert on_replica.quiet(1.0)
        assert replica.client().execute_command("SPUBLISH", ch, "after") == 1
        assert on_replica.frames(1) == [["smessage", ch, "after"]]
        on_master.close()
        on_replica.close()
