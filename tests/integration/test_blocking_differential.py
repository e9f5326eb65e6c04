"""Blocked clients meeting keys that move, vanish or change type, on our
server and on redis-server 7.0.15: each case blocks a client, runs the
same commands on both, and compares what the blocked client receives.
XREADGROUP fails with -UNBLOCKED when its stream goes (DEL, FLUSHALL, a
type change, SWAPDB with a db that lacks it) and with -NOGROUP when its
group goes; list and zset pops are served by RENAME, SORT STORE, COPY and
MOVE.  CLIENT UNBLOCK ... ERROR counts as a failed call of the blocked
command (INFO commandstats), as Redis counts it."""
import threading
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER
from rawresp import RawConn

pytestmark = pytest.mark.differential

XRG = ["XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"]
STREAM = [["XADD", "s", "1-1", "f", "v"], ["XGROUP", "CREATE", "s", "g", "$"]]

CASES = {
    "rename onto the key": ([], ["BLPOP", "foo", "0"], [["LPUSH", "bob", "a", "b"], ["RENAME", "bob", "foo"]]),
    "sort store": ([["RPUSH", "src", "3", "1"]], ["BLPOP", "foo", "0"], [["SORT", "src", "STORE", "foo"]]),
    "copy": ([["RPUSH", "src", "3", "1"]], ["BLPOP", "foo", "0"], [["COPY", "src", "foo"]]),
    "move from another db": ([["SELECT", "1"], ["RPUSH", "foo", "x"], ["SELECT", "0"]], ["BLPOP", "foo", "0"],
                             [["SELECT", "1"], ["MOVE", "foo", "0"]]),
    "zset renamed": ([], ["BZPOPMIN", "foo", "0"], [["ZADD", "bob", "1", "a"], ["RENAME", "bob", "foo"]]),
    "stream deleted": (STREAM, XRG, [["DEL", "s"]]),
    "stream flushed": (STREAM, XRG, [["FLUSHALL"]]),
    "stream becomes a string": (STREAM, XRG, [["MULTI"], ["DEL", "s"], ["SET", "s", "x"], ["EXEC"]]),
    "group destroyed": (STREAM, XRG, [["XGROUP", "DESTROY", "s", "g"]]),
    "stream swapped away": ([["SELECT", "9"]] + STREAM + [["SELECT", "0"]], ["SELECT", "9"] + XRG,
                            [["SWAPDB", "4", "9"]]),
}


def blocked_reply(port, setup, blocked, then):
    c = RawConn(port)
    c.call("FLUSHALL")
    for cmd in setup:
        c.call(*cmd)
    w = RawConn(port, timeout=5)
    if blocked[0] == "SELECT":
        w.call(*blocked[:2])
        blocked = blocked[2:]
    w.send(*blocked)
    time.sleep(0.2)
    for cmd in then:
        c.call(*cmd)
    try:
        return w.read()
    except OSError:
        return "still blocked"
    finally:
        w.close()
        c.close()


@pytest.fixture(scope="module")
def ports():
    from conftest import ServerProcess
    servers = [ServerProcess(b, ["--save", ""]) for b in (SERVER, REDIS_SERVER)]
    yield [s.port for s in servers]
    for s in servers:
        s.stop()


@pytest.mark.parametrize("name", list(CASES))
def test_blocked_client_gets_what_redis_gives(ports, name):
    got = [blocked_reply(p, *CASES[name]) for p in ports]
    assert got[0] == got[1], name
    assert got[0] != "still blocked"


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_client_unblock_error_is_a_failed_call(start_server, binary):
    s = start_server(binary=binary)
    c = redis.Redis(port=s.port, decode_responses=True)
    w = redis.Redis(port=s.port, decode_responses=True, single_connection_client=True)
    wid = w.client_id()
    out = {}

    def run():
        try:
            w.blpop("list1", 0)
        except redis.ResponseError as e:
            out["err"] = str(e)
    t = threading.Thread(target=run)
    t.start()
    for _ in range(100):
        if c.info("clients")["blocked_clients"] == 1:
            break
        time.sleep(0.02)
    assert c.client_unblock(wid, error=True)
    t.join(5)
    assert out["err"].startswith("UNBLOCKED")
    stat = c.info("commandstats")["cmdstat_blpop"]
    assert (stat["calls"], stat["rejected_calls"], stat["failed_calls"]) == (1, 0, 1)
    assert "count=1" in str(c.info("errorstats")["errorstat_UNBLOCKED"])
