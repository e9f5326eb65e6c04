"""Client-side caching (CLIENT TRACKING and friends), differential against
Debian's redis-server 7.0.15.

Each scenario is a script of requests on several named raw connections
(RESP2 or RESP3); after every step, whatever each connection received
(replies and invalidation pushes, in order) is collected and must equal,
byte for byte, what Redis sent on the same step.  Client ids differ between
the servers, so each connection's id is replaced by its name before the
comparison, and "{id:X}" in a request stands for connection X's id.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_tracking.py"""
import time

import pytest

from scripted import compare

pytestmark = pytest.mark.differential

def test_resp3_default_mode(start_server):
    compare(start_server, {"a": 3, "b": 2}, [
        ("a", ["CLIENT", "TRACKING", "on"]),
        ("a", ["GET", "k"]), ("a", ["MGET", "k", "k2", "k3"]), ("a", ["HGET", "h", "f"]),
        ("b", ["SET", "k", "1"]),              # one invalidation for k
        ("b", ["SET", "k", "2"]),              # already forgotten: nothing
        ("b", ["MSET", "k2", "x", "k3", "y"]),
        ("b", ["HSET", "h", "f", "v"]),
        ("a", ["GET", "k"]), ("a", ["SET", "k", "self"]),   # own change: after the reply
        ("a", ["GET", "k"]), ("b", ["DEL", "k"]),
        ("a", ["CLIENT", "TRACKINGINFO"]), ("a", ["CLIENT", "GETREDIR"]),
        ("a", ["GET", "k"]), ("b", ["FLUSHALL"]),            # a null invalidation
        ("a", ["GET", "z"]), ("a", ["FLUSHDB"]),
        ("a", ["CLIENT", "TRACKING", "off"]), ("a", ["GET", "k"]), ("b", ["SET", "k", "v"]),
        ("a", ["CLIENT", "TRACKINGINFO"]), ("a", ["CLIENT", "GETREDIR"]),
    ])


def test_noloop_optin_optout(start_server):
    compare(start_server, {"a": 3, "b": 3, "c": 3}, [
        ("a", ["CLIENT", "TRACKING", "on", "NOLOOP"]),
        ("a", ["GET", "k"]), ("a", ["SET", "k", "1"]), ("b", ["SET", "k", "2"]),
        ("a", ["GET", "k"]), ("b", ["SET", "k", "3"]),
        ("b", ["CLIENT", "TRACKING", "on", "OPTIN"]),
        ("b", ["GET", "x"]), ("b", ["CLIENT", "CACHING", "yes"]), ("b", ["GET", "y"]),
        ("c", ["MSET", "x", "1", "y", "2"]),
        ("b", ["CLIENT", "CACHING", "yes"]), ("b", ["CLIENT", "TRACKINGINFO"]), ("b", ["GET", "x"]),
        ("b", ["CLIENT", "TRACKINGINFO"]), ("c", ["SET", "x", "3"]),
        ("b", ["CLIENT", "CACHING", "no"]), ("b", ["CLIENT", "TRACKING", "on", "OPTOUT"]),
        ("c", ["CLIENT", "TRACKING", "on", "OPTOUT"]),
        ("c", ["GET", "p"]), ("c", ["CLIENT", "CACHING", "no"]), ("c", ["GET", "q"]),
        ("c", ["CLIENT", "TRACKINGINFO"]),
        ("a", ["MSET", "p", "1", "q", "2"]),
        ("c", ["CLIENT", "CACHING", "yes"]),
        # MULTI: CACHING yes applies to the whole transaction.
        ("b", ["CLIENT", "TRACKING", "off"]), ("b", ["CLIENT", "TRACKING", "on", "OPTIN"]),
        ("b", ["CLIENT", "CACHING", "yes"]), ("b", ["MULTI"]), ("b", ["GET", "m1"]), ("b", ["GET", "m2"]),
        ("b", ["EXEC"]), ("a", ["MSET", "m1", "1", "m2", "2"]),
    ])


def test_bcast_prefixes(start_server):
    compare(start_server, {"a": 3, "b": 2, "c": 3}, [
        ("a", ["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:", "PREFIX", "obj:"]),
        ("c", ["CLIENT", "TRACKING", "on", "BCAST", "NOLOOP"]),
        ("b", ["MSET", "user:1", "a", "user:2", "b", "other", "c", "obj:9", "d"]),
        ("c", ["SET", "user:3", "x"]), ("b", ["DEL", "user:1"]),
        ("a", ["CLIENT", "TRACKINGINFO"]), ("c", ["CLIENT", "TRACKINGINFO"]),
        ("a", ["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "user:x"]),
        ("a", ["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "zz", "PREFIX", "z"]),
        ("a", ["CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "new:"]),
        ("a", ["CLIENT", "TRACKINGINFO"]),
        ("b", ["SET", "new:1", "v"]),
        ("a", ["CLIENT", "TRACKING", "on"]),
        ("a", ["CLIENT", "TRACKING", "off"]), ("b", ["SET", "user:5", "v"]),
    ])


def test_resp2_redirect_and_broken(start_server):
    compare(start_server, {"r": 2, "a": 2, "b": 2, "r3": 3, "a3": 3}, [
        ("r", ["SUBSCRIBE", "__redis__:invalidate"]),
        ("a", ["CLIENT", "TRACKING", "on", "REDIRECT", "{id:r}"]),
        ("a", ["GET", "k"]), ("a", ["GET", "j"]), ("b", ["SET", "k", "1"]),
        ("a", ["CLIENT", "GETREDIR"]), ("a", ["CLIENT", "TRACKINGINFO"]),
        ("b", ["FLUSHALL"]),
        # A RESP3 redirect target gets pushes without subscribing.
        ("a3", ["CLIENT", "TRACKING", "on", "REDIRECT", "{id:r3}"]),
        ("a3", ["GET", "q"]), ("b", ["SET", "q", "1"]),
        ("r3", ["QUIT"]), ("a3", ["GET", "q"]), ("b", ["SET", "q", "2"]),
        ("a3", ["CLIENT", "TRACKINGINFO"]),
        ("a", ["CLIENT", "TRACKING", "on", "REDIRECT", "999999"]),
        ("a", ["CLIENT", "TRACKING", "on", "REDIRECT", "{id:r}", "REDIRECT", "{id:r}"]),
        ("a", ["CLIENT", "TRACKING", "on", "REDIRECT", "x"]),
    ])


def test_errors(start_server):
    compare(start_server, {"a": 2}, [
        ("a", ["CLIENT", "TRACKING", "maybe"]), ("a", ["CLIENT", "TRACKING"]),
        ("a", ["CLIENT", "TRACKING", "on", "PREFIX", "x"]),
        ("a", ["CLIENT", "TRACKING", "on", "BCAST", "OPTIN"]),
        ("a", ["CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT"]),
        ("a", ["CLIENT", "TRACKING", "on", "FOO"]), ("a", ["CLIENT", "TRACKING", "on", "PREFIX"]),
        ("a", ["CLIENT", "CACHING", "yes"]), ("a", ["CLIENT", "CACHING"]),
        ("a", ["CLIENT", "TRACKING", "on"]), ("a", ["CLIENT", "CACHING", "yes"]),
        ("a", ["CLIENT", "CACHING", "no"]), ("a", ["CLIENT", "CACHING", "maybe"]),
        ("a", ["CLIENT", "TRACKING", "on", "BCAST"]),
        ("a", ["CLIENT", "TRACKING", "on", "OPTIN"]),
        ("a", ["CLIENT", "TRACKING", "on", "OPTOUT"]), ("a", ["CLIENT", "CACHING", "no"]),
        ("a", ["CLIENT", "TRACKING", "on", "OPTIN"]),
        ("a", ["CLIENT", "TRACKINGINFO"]), ("a", ["CLIENT", "GETREDIR", "x"]),
        ("a", ["RESET"]), ("a", ["CLIENT", "TRACKINGINFO"]),
    ])


def test_expiry(start_server):
    compare(start_server, {"a": 3, "b": 2}, [
        ("a", ["CLIENT", "TRACKING", "on"]),
        ("b", ["SET", "e", "1", "PX", "400"]), ("b", ["SET", "f", "1", "PX", "400"]), ("a", ["GET", "e"]),
        ("sleep", 0.9),                            # active expiry invalidates
        ("b", ["GET", "e"]),
        ("b", ["CONFIG", "GET", "tracking-table-max-keys"]),
    ])


def test_bcast_noloop_still_gets_expiries(start_server):
    """NOLOOP drops the keys a client changed itself, not the keys the
    server expired afterwards, and those are sent when they expire, not
    with the next command (Redis's test suite waits for this one)."""
    compare(start_server, {"r": 2, "a": 2}, [
        ("r", ["SUBSCRIBE", "__redis__:invalidate"]),
        ("a", ["CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", "{id:r}", "NOLOOP"]),
        ("a", ["SET", "mykey", "myval", "PX", "200"]), ("a", ["SET", "mykeyotherkey", "myval"]),
        ("sleep", 0.8),  # active expiry, with no command running: mykey is sent now
        ("a", ["PING"]),
    ])


def test_table_bound(start_server):
    """Over tracking-table-max-keys, the cron invalidates random keys until
    the table fits again (which ones is random, in Redis too)."""
    s = start_server()
    from rawresp import RawConn
    a, b = RawConn(s.port), RawConn(s.port)
    a.call("HELLO", "3")
    assert b.call("CONFIG", "SET", "tracking-table-max-keys", "3") == "OK"
    assert a.call("CLIENT", "TRACKING", "on") == "OK"
    a.call("MGET", "k1", "k2", "k3", "k4", "k5")
    gone = set()
    for _ in range(2):
        kind, (what, keys) = a.read()
        assert kind == "push" and what == b"invalidate"
        gone |= set(keys)
    assert len(gone) == 2 and gone <= {b"k1", b"k2", b"k3", b"k4", b"k5"}
    assert b.call("INFO", "stats").count(b"tracking_total_keys:3") == 1
    b.call("MSET", *sum(([k.decode(), "x"] for k in sorted({b"k1", b"k2", b"k3", b"k4", b"k5"} - gone)), []))
    kinds = [a.read() for _ in range(3)]
    assert sorted(k[1][1][0] for k in kinds) == sorted({b"k1", b"k2", b"k3", b"k4", b"k5"} - gone)


def test_client_list_shows_tracking(start_server):
    s = start_server()
    from rawresp import RawConn
    r, a = RawConn(s.port), RawConn(s.port)
    rid = r.call("CLIENT", "ID")
    a.call("CLIENT", "TRACKING", "on", "REDIRECT", str(rid))
    line = a.call("CLIENT", "INFO").decode()
    assert " flags=t " in line and " redir=%d " % rid in line
    a.call("CLIENT", "TRACKING", "on", "BCAST")
    assert a.call("CLIENT", "TRACKING", "off") == "OK"
    a.call("CLIENT", "TRACKING", "on", "BCAST", "REDIRECT", str(rid))
    assert " flags=tB " in a.call("CLIENT", "INFO").decode()
    r.sock.close()
    a.call("SET", "x", "1")   # the redirect target is gone: flagged broken
    time.sleep(0.1)
    assert " flags=tRB " in a.call("CLIENT", "INFO").decode()


def test_redis_py_style_invalidation(start_server):
    """What client libraries do: a RESP3 connection caches, another writes."""
    s = start_server()
    from rawresp import RawConn
    a, b = RawConn(s.port), RawConn(s.port)
    a.call("HELLO", "3")
    assert a.call("CLIENT", "TRACKING", "on") == "OK"
    b.call("SET", "k", "v")
    assert a.call("GET", "k") == b"v"
    b.call("SET", "k", "w")
    assert a.read() == ("push", [b"invalidate", [b"k"]])
    info = s.client().info()
    assert info["tracking_clients"] == 1
    a.call("GET", "k")
    a.call("GET", "k2")
    stats = s.client().info("stats")
    assert stats["tracking_total_keys"] == 2 and stats["tracking_total_items"] == 2
    assert "t" in s.client().client_list()[-1]["flags"] or any("t" in c["flags"] for c in s.client().client_list())
