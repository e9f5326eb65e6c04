"""Pub/sub: SUBSCRIBE/PSUBSCRIBE/UNSUBSCRIBE/PUNSUBSCRIBE, PUBLISH, PUBSUB,
RESP2 subscribed-mode rules, RESP3 push frames, glob patterns, CLIENT LIST
fields, and client-output-buffer-limit pubsub disconnecting a slow
subscriber.  Publisher and subscribers are separate connections."""
import time

import pytest
import redis

from rawresp import RawConn


def wait_for(pred, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return False


def test_publish_counts_receivers_and_delivers(server, r):
    assert r.publish("news", "nobody") == 0
    subs = [RawConn(server.port) for _ in range(3)]
    for s in subs:
        assert s.call("SUBSCRIBE", "news") == [b"subscribe", b"news", 1]
    assert r.publish("news", "hello") == 3
    for s in subs:
        assert s.read() == [b"message", b"news", b"hello"]
        s.close()


def test_pattern_and_channel_together(server, r):
    s = RawConn(server.port)
    assert s.call("SUBSCRIBE", "user.1") == [b"subscribe", b"user.1", 1]
    assert s.call("PSUBSCRIBE", "user.*") == [b"psubscribe", b"user.*", 2]
    other = RawConn(server.port)
    assert other.call("PSUBSCRIBE", "user.?") == [b"psubscribe", b"user.?", 1]
    assert r.publish("user.1", "x") == 3
    got = [s.read(), s.read()]
    assert [b"message", b"user.1", b"x"] in got
    assert [b"pmessage", b"user.*", b"user.1", b"x"] in got
    assert other.read() == [b"pmessage", b"user.?", b"user.1", b"x"]
    # Only the pattern matches a longer name.
    assert r.publish("user.12", "y") == 1
    assert s.read() == [b"pmessage", b"user.*", b"user.12", b"y"]
    s.close()
    other.close()


def test_unsubscribe_all_counts(server):
    s = RawConn(server.port)
    s.send("SUBSCRIBE", "a", "b", "c")
    assert [s.read() for _ in range(3)] == [[b"subscribe", b"a", 1], [b"subscribe", b"b", 2],
                                            [b"subscribe", b"c", 3]]
    s.send("PSUBSCRIBE", "p*", "q*")
    assert [s.read()[2] for _ in range(2)] == [4, 5]
    # Repeating a subscription changes nothing.
    assert s.call("SUBSCRIBE", "a") == [b"subscribe", b"a", 5]
    s.send("UNSUBSCRIBE")
    frames = [s.read() for _ in range(3)]
    assert sorted(f[1] for f in frames) == [b"a", b"b", b"c"]
    assert [f[2] for f in frames] == [4, 3, 2]
    assert all(f[0] == b"unsubscribe" for f in frames)
    # Nothing left: a single frame with a null channel and the pattern count.
    assert s.call("UNSUBSCRIBE") == [b"unsubscribe", None, 2]
    assert s.call("PUNSUBSCRIBE", "p*", "nope") == [b"punsubscribe", b"p*", 1]
    assert s.read() == [b"punsubscribe", b"nope", 1]
    assert s.call("PUNSUBSCRIBE") == [b"punsubscribe", b"q*", 0]
    assert s.call("PUNSUBSCRIBE") == [b"punsubscribe", None, 0]
    # Out of subscribed mode: ordinary commands work again.
    assert s.call("PING") == "PONG"
    s.close()


def test_resp2_subscribed_mode_rules(server):
    s = RawConn(server.port)
    s.call("SUBSCRIBE", "ch")
    assert s.call("GET", "x") == ("err", "ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / "
                                         "PING / QUIT / RESET are allowed in this context")
    assert s.call("CONFIG", "GET", "port")[1].startswith("ERR Can't execute 'config|get'")
    assert s.call("PING") == [b"pong", b""]
    assert s.call("PING", "hi") == [b"pong", b"hi"]
    assert s.call("RESET") == "RESET"
    assert s.call("GET", "x") is None
    assert s.call("QUIT") == "OK"
    s.close()


def test_resp3_push_frames(server, r):
    s = RawConn(server.port)
    hello = s.call("HELLO", "3")
    assert b"proto" in hello
    assert s.call("SUBSCRIBE", "c3") == ("push", [b"subscribe", b"c3", 1])
    # RESP3 allows any command while subscribed.
    assert s.call("SET", "k3", "v") == "OK"
    assert s.call("GET", "k3") == b"v"
    assert r.publish("c3", "m") == 1
    assert s.read() == ("push", [b"message", b"c3", b"m"])
    assert s.call("PSUBSCRIBE", "c*") == ("push", [b"psubscribe", b"c*", 2])
    r.publish("c3", "n")
    got = [s.read(), s.read()]
    assert ("push", [b"message", b"c3", b"n"]) in got
    assert ("push", [b"pmessage", b"c*", b"c3", b"n"]) in got
    assert s.call("UNSUBSCRIBE", "c3") == ("push", [b"unsubscribe", b"c3", 1])
    assert s.call("PING") == "PONG"
    s.close()


@pytest.mark.parametrize("pattern,match,nomatch", [
    ("h?llo", ["hello", "hallo"], ["hllo", "heello"]),
    ("h*llo", ["hllo", "heeeello"], ["hlo", "hello!"]),
    ("h[ae]llo", ["hello", "hallo"], ["hillo"]),
    ("h[^e]llo", ["hallo", "hbllo"], ["hello"]),
    ("h[a-b]llo", ["hallo", "hbllo"], ["hcllo"]),
    ("h\\*llo", ["h*llo"], ["hello"]),
])
def test_glob_patterns(server, r, pattern, match, nomatch):
    s = RawConn(server.port)
    s.call("PSUBSCRIBE", pattern)
    for ch in match:
        assert r.publish(ch, "m") == 1, ch
        assert s.read() == [b"pmessage", pattern.encode(), ch.encode(), b"m"]
    for ch in nomatch:
        assert r.publish(ch, "m") == 0, ch
    s.close()


def test_pubsub_introspection(server, r):
    a, b = RawConn(server.port), RawConn(server.port)
    a.send("SUBSCRIBE", "news.tech", "news.art", "sport")
    [a.read() for _ in range(3)]
    b.call("SUBSCRIBE", "news.tech")
    b.send("PSUBSCRIBE", "news.*", "x*")
    [b.read() for _ in range(2)]
    assert sorted(r.pubsub_channels()) == ["news.art", "news.tech", "sport"]
    assert sorted(r.pubsub_channels("news.*")) == ["news.art", "news.tech"]
    assert r.pubsub_numsub("news.tech", "sport", "none") == [("news.tech", 2), ("sport", 1), ("none", 0)]
    assert r.execute_command("PUBSUB", "NUMSUB") == []
    assert r.pubsub_numpat() == 2
    info = r.info("stats")
    assert info["pubsub_channels"] == 3 and info["pubsub_patterns"] == 2
    help_lines = r.execute_command("PUBSUB", "HELP")
    assert any("NUMPAT" in line for line in help_lines)
    with pytest.raises(redis.ResponseError, match="unknown subcommand or wrong number of arguments for 'CHANNELS'"):
        r.execute_command("PUBSUB", "CHANNELS", "a", "b")
    # CLIENT LIST: sub/psub counts and the P flag; TYPE pubsub filters.
    lines = r.execute_command("CLIENT", "LIST", "TYPE", "pubsub").strip().split("\n")
    assert len(lines) == 2
    fields = [dict(kv.split("=", 1) for kv in line.split(" ")) for line in lines]
    assert sorted((f["sub"], f["psub"]) for f in fields) == [("1", "2"), ("3", "0")]
    assert all("P" in f["flags"] for f in fields)
    normal = r.execute_command("CLIENT", "LIST", "TYPE", "normal")
    assert "flags=P" not in normal and "sub=0 psub=0" in normal
    a.close()
    b.close()
    # Closing the connections drops their subscriptions.
    assert wait_for(lambda: r.pubsub_numsub("news.tech") == [("news.tech", 0)])
    assert wait_for(lambda: r.pubsub_numpat() == 0)
    assert r.pubsub_channels() == []


def test_redis_py_pubsub_api(server, r):
    p = server.client().pubsub()
    p.subscribe("rp")
    p.psubscribe("r*")
    assert p.get_message(timeout=2)["type"] == "subscribe"
    assert p.get_message(timeout=2)["type"] == "psubscribe"
    assert r.publish("rp", "payload") == 2
    msgs = [p.get_message(timeout=2) for _ in range(2)]
    assert sorted(m["type"] for m in msgs) == ["message", "pmessage"]
    assert all(m["data"] == "payload" for m in msgs)
    p.close()


def test_slow_subscriber_is_disconnected(server, r):
    r.config_set("client-output-buffer-limit", "pubsub 1mb 512kb 1")
    try:
        base = r.info("memory")["used_memory"]
        slow = RawConn(server.port, rcvbuf=4096)
        slow.call("SUBSCRIBE", "flood")
        payload = "x" * 65536
        published = 0
        # The socket buffers absorb a few MB first; then the limit must hit.
        while r.pubsub_numsub("flood")[0][1] == 1:
            r.publish("flood", payload)
            published += 1
            assert published < 2000, "slow subscriber was never disconnected"
        assert published > 16, "the limit must not hit before the socket buffers are full"
        assert r.ping()
        assert r.pubsub_numsub("flood") == [("flood", 0)]
        assert "overcoming of output buffer limits" in server.read_log()
        assert "flood" not in r.pubsub_channels()
        # Its queued output (MBs) was released: memory is back near the start.
        assert wait_for(lambda: r.info("memory")["used_memory"] < base + 1024 * 1024)
        # Reading from the dead connection ends with a close.
        with pytest.raises((ConnectionError, OSError)):
            while True:
                slow.read()
        slow.close()
        # A subscriber that keeps up is not affected by the same limit.
        fast = server.client().pubsub()
        fast.subscribe("calm")
        fast.get_message(timeout=2)
        for i in range(50):
            assert r.publish("calm", payload) == 1
            assert fast.get_message(timeout=2)["data"] == payload
        fast.close()
    finally:
        r.config_set("client-output-buffer-limit", "pubsub 32mb 8mb 60")


def test_output_limit_config_syntax(r):
    assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"] == \
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
    r.config_set("client-output-buffer-limit", "normal 10mb 5mb 10 replica 1gb 512mb 30")
    assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"] == \
        "normal 10485760 5242880 10 slave 1073741824 536870912 30 pubsub 33554432 8388608 60"
    for bad, msg in [("pubsub 1mb 512kb", "Wrong number of arguments in buffer limit configuration."),
                     ("foo 1mb 512kb 1", "Invalid client class specified in buffer limit configuration."),
                     ("pubsub 1mb x 1", "Error in hard, soft or soft_seconds setting in buffer limit configuration.")]:
        with pytest.raises(redis.ResponseError, match=msg):
            r.config_set("client-output-buffer-limit", bad)
    r.config_set("client-output-buffer-limit", "normal 0 0 0 slave 256mb 64mb 60")
    assert r.config_get("client-output-buffer-limit")["client-output-buffer-limit"] == \
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
