"""Sharded pub/sub (SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH, PUBSUB
SHARDCHANNELS|SHARDNUMSUB) and PUBSUB NUMSUB's reply shape, compared frame
by frame with Debian's redis-server 7.0 in RESP2 and RESP3: the same
subscriber/publisher script runs against both servers and every frame
each connection receives must be identical."""
import pytest

from rawresp import ExactConn

pytestmark = pytest.mark.differential


def run_script(port, proto):
    sub, sub2, pub = ExactConn(port), ExactConn(port), ExactConn(port)
    out = []
    for c in (sub, sub2, pub):
        if proto == 3:
            c.call("hello", "3")

    def frames(conn, n):
        return [conn.read_exact()[0] for _ in range(n)]

    sub.send("ssubscribe", "a", "b", "a")
    out += frames(sub, 3)
    sub.send("subscribe", "a")
    out += frames(sub, 1)
    sub.send("psubscribe", "*")
    out += frames(sub, 1)
    sub2.send("ssubscribe", "b")
    out += frames(sub2, 1)
    out.append(pub.call("spublish", "a", "m1")[0])
    out += frames(sub, 1)                      # smessage only: no pattern, no plain channel
    out.append(pub.call("spublish", "b", "m2")[0])
    out += frames(sub, 1) + frames(sub2, 1)
    out.append(pub.call("publish", "a", "m3")[0])
    out += frames(sub, 2)                      # message + pmessage, no smessage
    out.append(pub.call("spublish", "nobody", "x")[0])
    out.append(pub.call("pubsub", "shardnumsub", "a", "b", "c")[0])
    out.append(pub.call("pubsub", "numsub", "a", "b")[0])
    out.append(pub.call("pubsub", "shardnumsub")[0])
    out.append(pub.call("pubsub", "shardchannels", "nomatch*")[0])
    out.append(pub.call("pubsub", "shardchannels", "a")[0])
    out.append(pub.call("pubsub", "shardchannels", "a", "b")[0])
    chans = pub.call("pubsub", "shardchannels")[1]
    out.append(sorted(chans))
    if proto == 2:
        out.append(sub.call("get", "x")[0])   # subscribed-mode rule names (P|S)SUBSCRIBE
    sub.send("sunsubscribe", "b", "zz")
    out += frames(sub, 2)
    sub.send("sunsubscribe")
    out += frames(sub, 1)
    sub.send("sunsubscribe")
    out += frames(sub, 1)
    sub.send("unsubscribe")
    out += frames(sub, 1)
    sub.send("punsubscribe")
    out += frames(sub, 1)
    out.append(sub.call("ping")[0])
    out.append(pub.call("multi")[0])
    out.append(pub.call("ssubscribe", "q")[0])
    out.append(pub.call("exec")[0])
    sub2.send("sunsubscribe")
    out += frames(sub2, 1)
    out.append(pub.call("pubsub", "shardnumsub", "b")[0])
    info = pub.call("info", "stats")[1]
    out.append([line for line in info.split(b"\r\n") if line.startswith(b"pubsubshard_channels")])
    for c in (sub, sub2, pub):
        c.close()
    return out


@pytest.mark.parametrize("proto", [2, 3])
def test_sharded_pubsub_matches_redis(server, redis_ref, proto):
    ours = run_script(server.port, proto)
    ref = run_script(redis_ref.port, proto)
    assert len(ours) == len(ref)
    for i, (a, b) in enumerate(zip(ours, ref)):
        assert a == b, (i, a, b)


def test_client_list_counts_shard_subscriptions(server):
    c = ExactConn(server.port)
    c.send("ssubscribe", "x", "y")
    c.read_exact()
    c.read_exact()
    admin = server.client()
    line = [l for l in admin.execute_command("client", "list").splitlines() if "ssub=2" in l]
    assert len(line) == 1
    c.close()


def reply_off_pushes(port):
    """RESP3 pushes under CLIENT REPLY OFF: the (un)subscribe frames and the
    messages still arrive, the PING replies do not."""
    sub, pub = ExactConn(port), ExactConn(port)
    sub.call("hello", "3")
    out = []
    for subscribe in ("ssubscribe", "subscribe"):
        sub.send("client", "reply", "off")
        sub.send("ping")
        sub.send(subscribe, "ch")
        out.append(sub.read_exact()[0])
    out.append(pub.call("spublish", "ch", "hello")[0])
    out.append(sub.read_exact()[0])
    out.append(pub.call("publish", "ch", "hi")[0])
    out.append(sub.read_exact()[0])
    sub.send("sunsubscribe", "ch")
    out.append(sub.read_exact()[0])
    for c in (sub, pub):
        c.close()
    return out


def test_reply_off_keeps_pushes_as_redis(server, redis_ref):
    ours = reply_off_pushes(server.port)
    assert ours == reply_off_pushes(redis_ref.port)
    assert ours[3].startswith(b">3\r\n$8\r\nsmessage")
