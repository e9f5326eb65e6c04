"""Blocking list commands with several clients: who is served and in what
order, timeouts, disconnects while blocked, BLMOVE chains, several keys,
pipelined requests behind a blocked command, INFO blocked_clients."""
import socket
import time

import pytest
import redis


def blocked(server, *args):
    """A connection that has sent a blocking command (reply not read yet)."""
    conn = redis.Connection(host="127.0.0.1", port=server.port, decode_responses=True, socket_timeout=5)
    conn.connect()
    conn.send_command(*args)
    return conn


def wait_blocked(r, n, timeout=2.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if r.info("clients")["blocked_clients"] == n:
            return
        time.sleep(0.005)
    raise AssertionError("expected %d blocked clients, INFO says %d" % (n, r.info("clients")["blocked_clients"]))


def silent(conn, wait=0.05):
    return not conn.can_read(timeout=wait)


def test_push_serves_blocked_clients_in_arrival_order(server, r):
    conns = []
    for i in range(3):
        conns.append(blocked(server, "BLPOP", "k", 0))
        wait_blocked(r, i + 1)          # make the arrival order certain
    assert all(silent(c) for c in conns)
    assert r.rpush("k", "a", "b") == 2
    assert conns[0].read_response() == ["k", "a"]
    assert conns[1].read_response() == ["k", "b"]
    assert silent(conns[2])
    wait_blocked(r, 1)
    assert not r.exists("k"), "both values went to blocked clients"
    r.lpush("k", "c")
    assert conns[2].read_response() == ["k", "c"]
    wait_blocked(r, 0)
    for c in conns:
        c.disconnect()


def test_push_and_pop_are_atomic_for_observers(server, r):
    c = blocked(server, "BRPOP", "k", 0)
    wait_blocked(r, 1)
    p = r.pipeline(transaction=False)
    p.lpush("k", "v")
    p.llen("k")
    p.exists("k")
    assert p.execute() == [1, 0, 0]   # the waiter took it before LLEN ran
    assert c.read_response() == ["k", "v"]
    c.disconnect()


@pytest.mark.parametrize("timeout", ["0.1", "0.25"])
def test_timeouts(server, r, timeout):
    c = blocked(server, "BLPOP", "nothing", timeout)
    t0 = time.time()
    assert c.read_response() is None
    elapsed = time.time() - t0
    assert float(timeout) - 0.02 <= elapsed < float(timeout) + 0.4
    wait_blocked(r, 0)
    c.disconnect()


def test_timeout_replies_and_errors(r):
    t0 = time.time()
    assert r.blpop(["a", "b"], 0.1) is None
    assert r.brpoplpush("a", "b", 0.1) is None
    assert r.execute_command("BLMOVE", "a", "b", "LEFT", "LEFT", "0.05") is None
    assert r.execute_command("BLMPOP", "0.05", 2, "a", "b", "LEFT") is None
    assert time.time() - t0 >= 0.28
    for args, msg in [(["BLPOP", "a", "-1"], "timeout is negative"),
                      (["BLPOP", "a", "abc"], "timeout is not a float or out of range"),
                      (["BRPOP", "a", "inf"], "timeout is out of range"),  # Redis 7.4 (7.0: negative)
                      (["BLMOVE", "a", "b", "LEFT", "UP", "1"], "syntax error"),
                      (["BLMPOP", "1", "0", "a", "LEFT"], "numkeys should be greater than 0"),
                      (["BLMPOP", "-1", "1", "a", "LEFT"], "timeout is negative")]:
        with pytest.raises(redis.ResponseError) as e:
            r.execute_command(*args)
        assert str(e.value) == msg


def test_existing_values_do_not_block(r):
    r.rpush("a", 1, 2, 3)
    assert r.blpop(["missing", "a"], 0) == ("a", "1")
    assert r.brpop(["a"], 0) == ("a", "3")
    assert r.execute_command("BLMPOP", 0, 1, "a", "LEFT", "COUNT", 5) == ["a", ["2"]]
    assert not r.exists("a")


def test_disconnect_while_blocked(server, r):
    c1 = blocked(server, "BLPOP", "k", "k2", 0)
    c2 = blocked(server, "BLPOP", "k", 0)
    wait_blocked(r, 2)
    c1.disconnect()
    wait_blocked(r, 1)
    r.rpush("k", "x")
    assert c2.read_response() == ["k", "x"]
    r.rpush("k2", "y")                      # nobody waits any more: it stays
    assert r.lrange("k2", 0, -1) == ["y"]
    c2.disconnect()
    wait_blocked(r, 0)


def test_blmove_chain(server, r):
    mover = blocked(server, "BLMOVE", "src", "dst", "LEFT", "RIGHT", 0)
    wait_blocked(r, 1)
    popper = blocked(server, "BLPOP", "dst", 0)
    wait_blocked(r, 2)
    p = r.pipeline(transaction=False)
    p.rpush("src", "v")
    p.exists("src", "dst")
    assert p.execute() == [1, 0]
    assert mover.read_response() == "v"
    assert popper.read_response() == ["dst", "v"]
    wait_blocked(r, 0)
    mover.disconnect()
    popper.disconnect()


def test_brpoplpush_and_rotation_on_same_key(server, r):
    c = blocked(server, "BRPOPLPUSH", "q", "q", 0)
    wait_blocked(r, 1)
    r.rpush("q", "a")
    assert c.read_response() == "a"
    assert r.lrange("q", 0, -1) == ["a"]
    c.disconnect()


def test_several_keys_served_by_the_pushed_one(server, r):
    c = blocked(server, "BRPOP", "k1", "k2", "k3", 0)
    wait_blocked(r, 1)
    r.rpush("k3", "first", "second")
    assert c.read_response() == ["k3", "second"]
    assert r.lrange("k3", 0, -1) == ["first"]
    m = blocked(server, "BLMPOP", 0, 2, "m1", "m2", "RIGHT", "COUNT", 2)
    wait_blocked(r, 1)
    r.rpush("m2", 1, 2, 3)
    assert m.read_response() == ["m2", ["3", "2"]]
    c.disconnect()
    m.disconnect()


def test_wrong_type_write_keeps_client_blocked(server, r):
    c = blocked(server, "BLPOP", "k", 0)
    wait_blocked(r, 1)
    r.set("k", "string")
    assert silent(c)
    r.delete("k")
    r.rpush("k", "v")
    assert c.read_response() == ["k", "v"]
    c.disconnect()


def test_pipelined_commands_wait_behind_blocked_one(server, r):
    with socket.create_connection(("127.0.0.1", server.port)) as s:
        s.sendall(b"BLPOP q 0\r\nPING\r\nLLEN q\r\n")
        wait_blocked(r, 1)
        s.settimeout(0.1)
        with pytest.raises(socket.timeout):
            s.recv(100)
        r.rpush("q", "x", "y")
        s.settimeout(2)
        want = b"*2\r\n$1\r\nq\r\n$1\r\nx\r\n+PONG\r\n:1\r\n"
        got = b""
        while len(got) < len(want):
            got += s.recv(100)
        assert got == want


def test_info_and_client_list_show_blocked(server, r):
    c = blocked(server, "BLPOP", "k", 0)
    wait_blocked(r, 1)
    flags = [cl["flags"] for cl in r.client_list()]
    assert "b" in flags
    c.disconnect()
    wait_blocked(r, 0)


def test_many_clients_blocked_then_disconnected(server, r):
    conns = [blocked(server, "BLPOP", "k%d" % (i % 5), "shared", 0) for i in range(50)]
    wait_blocked(r, 50)
    for c in conns[::2]:
        c.disconnect()
    wait_blocked(r, 25)
    r.rpush("shared", *range(25))
    got = sorted(int(c.read_response()[1]) for c in conns[1::2])
    assert got == list(range(25))
    wait_blocked(r, 0)
    for c in conns[1::2]:
        c.disconnect()


def test_bzpop_served_by_zadd(server, r):
    c = blocked(server, "BZPOPMIN", "z1", "z2", 0)
    wait_blocked(r, 1)
    r.zadd("z2", {"b": 2, "a": 1})
    assert c.read_response() == ["z2", "a", "1"]
    assert r.zrange("z2", 0, -1) == ["b"]
    c.send_command("BZPOPMAX", "z2", 0)
    assert c.read_response() == ["z2", "b", "2"]
    assert not r.exists("z2")
    c.send_command("BZMPOP", 0, 1, "z3", "MAX", "COUNT", 2)
    wait_blocked(r, 1)
    r.zadd("z3", {"x": 1.5, "y": 2.5, "w": 0})
    assert c.read_response() == ["z3", [["y", "2.5"], ["x", "1.5"]]]
    assert r.zrange("z3", 0, -1) == ["w"]
    assert r.execute_command("BZPOPMIN", "none", "0.05") is None
    r.set("s", "v")
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("BZMPOP", 0, 1, "s", "MIN")
    assert str(e.value).startswith("WRONGTYPE")
    c.disconnect()


def test_list_and_zset_waiters_on_one_key(server, r):
    zc = blocked(server, "BZPOPMIN", "k", 0)
    wait_blocked(r, 1)
    lc = blocked(server, "BLPOP", "k", 0)
    wait_blocked(r, 2)
    r.rpush("k", "v")                   # only the list waiter can take it
    assert lc.read_response() == ["k", "v"]
    assert silent(zc)
    r.zadd("k", {"m": 3})
    assert zc.read_response() == ["k", "m", "3"]
    zc.disconnect()
    lc.disconnect()


def test_blocking_commands_inside_exec_do_not_block(r):
    p = r.pipeline(transaction=True)
    p.blpop(["k"], 0)
    p.execute_command("BLMOVE", "k", "d", "LEFT", "LEFT", 0)
    p.execute_command("BZPOPMIN", "k", 0)
    p.rpush("k", "a")
    p.blpop(["k"], 0)
    assert p.execute() == [None, None, None, 1, ("k", "a")]
    assert r.info("clients")["blocked_clients"] == 0
