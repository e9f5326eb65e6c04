"""MULTI/EXEC/DISCARD/WATCH: queuing, errors, and WATCH invalidation by
writes, expiry, flushes and SWAPDB; raw replies compared with Redis."""
import socket
import time

import pytest
import redis

from conftest import raw_request


def test_exec_runs_queued_commands_in_order(r):
    p = r.pipeline(transaction=True)
    p.set("a", 1).incr("a").get("a")
    assert p.execute() == [True, 2, "2"]


def test_watch_aborts_on_write_from_other_client(server, r):
    other = server.client()
    with r.pipeline() as p:
        p.watch("w")
        other.set("w", "changed")
        p.multi()
        p.set("w", "mine")
        with pytest.raises(redis.WatchError):
            p.execute()
    assert r.get("w") == "changed"


def test_watch_untouched_key_commits(server, r):
    with r.pipeline() as p:
        p.watch("w2")
        server.client().set("other", 1)
        p.multi()
        p.set("w2", "mine")
        assert p.execute() == [True]
    assert r.get("w2") == "mine"


def test_watch_invalidated_by_expiry(r):
    r.set("e", 1, px=50)
    with r.pipeline() as p:
        p.watch("e")
        time.sleep(0.15)
        p.multi()
        p.set("x", 1)
        with pytest.raises(redis.WatchError):
            p.execute()


def test_watch_invalidated_by_flushall_and_swapdb(server, r):
    r.set("f", 1)
    with r.pipeline() as p:
        p.watch("f")
        server.client().flushall()
        p.multi()
        p.set("f", 2)
        with pytest.raises(redis.WatchError):
            p.execute()
    r.set("s", 1)
    with r.pipeline() as p:
        p.watch("s")
        server.client().swapdb(0, 1)
        p.multi()
        p.get("s")
        with pytest.raises(redis.WatchError):
            p.execute()


def test_unwatch_and_exec_clear_watches(server, r):
    with r.pipeline() as p:
        p.watch("u")
        p.unwatch()
        server.client().set("u", 1)
        p.multi()
        p.set("u", 2)
        assert p.execute() == [True]


PROTOCOL_SCRIPT = (b"MULTI\r\nSET a\r\nGET a\r\nEXEC\r\nEXEC\r\nDISCARD\r\nMULTI\r\nMULTI\r\n"
                   b"WATCH x\r\nDISCARD\r\nMULTI\r\nSET k v\r\nINCR k\r\nGET k\r\nEXEC\r\n"
                   b"MULTI\r\nNOSUCHCMD\r\nEXEC\r\nWATCH\r\nUNWATCH\r\n")


@pytest.mark.differential
def test_transaction_errors_match_redis(server, redis_ref):
    ours, _ = raw_request(server.port, b"FLUSHALL\r\n" + PROTOCOL_SCRIPT, 0.5)
    theirs, _ = raw_request(redis_ref.port, b"FLUSHALL\r\n" + PROTOCOL_SCRIPT, 0.5)
    assert ours == theirs
    assert b"EXECABORT" in ours


def test_multi_state_freed_on_disconnect(server):
    for _ in range(50):
        with socket.create_connection(("127.0.0.1", server.port)) as s:
            s.sendall(b"WATCH a b c\r\nMULTI\r\nSET a 1\r\n")
            assert s.recv(100).startswith(b"+OK")
    c = server.client()
    c.set("a", "fine")
    assert c.get("a") == "fine"
