"""Errors where none should happen (propagation-error-behavior): a command
of the master's stream that fails on the replica, or a command of the AOF
that fails when it is replayed, is logged and counted in INFO's
unexpected_error_replies; with `panic` the server stops instead (the AOF and
a read-only replica), with `panic-on-replicas` only a replica does.  Each
case runs on our server and on Debian's redis-server 7.0.15."""
import os

import pytest

from conftest import REDIS_SERVER, SERVER
from repl_helpers import wait_caught_up, wait_for, wait_link_up

pytestmark = pytest.mark.differential

BINARIES = [SERVER, REDIS_SERVER]
IDS = ["ours", "redis"]


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
@pytest.mark.parametrize("behavior", ["ignore", "panic", "panic-on-replicas"])
def test_error_in_the_masters_stream(start_server, binary, behavior):
    m = start_server(args=["--repl-diskless-sync-delay", "0"])   # no 5 s wait for more replicas
    mc = m.client()
    s = start_server(args=["--replica-read-only", "no", "--propagation-error-behavior", behavior], binary=binary)
    sc = s.client()
    sc.replicaof("127.0.0.1", m.port)
    wait_link_up(sc)
    mc.set("other", "1")
    wait_caught_up(mc, sc)
    sc.rpush("k", "a")                       # the replica's own data diverges
    sc.config_set("replica-read-only", "yes")
    mc.incr("k")                             # WRONGTYPE there
    if behavior != "ignore":
        assert s.proc.wait(20) != 0
        return
    mc.set("after", "2")
    wait_for(lambda: sc.get("after") == "2", 20, what="the stream applied on")
    assert sc.info("stats")["unexpected_error_replies"] == 1
    assert sc.lrange("k", 0, -1) == ["a"]
    assert "== CRITICAL ==" in s.read_log()


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
@pytest.mark.parametrize("behavior", ["ignore", "panic", "panic-on-replicas"])
def test_error_replaying_the_aof(start_server, tmp_path, binary, behavior):
    """An AOF holding INCR of a string that is not a number: `panic` stops
    the start-up, the others load the rest of the file."""
    aof = b"".join(b"*%d\r\n" % len(c) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in c)
                   for c in [[b"SET", b"k", b"v"], [b"INCR", b"k"], [b"SET", b"after", b"2"]])
    d = str(tmp_path)
    with open(os.path.join(d, "appendonly.aof"), "wb") as f:
        f.write(aof)
    args = ["--dir", d, "--appendonly", "yes", "--propagation-error-behavior", behavior]
    if behavior == "panic":
        try:  # Redis answers -LOADING before it replays the file: it may be "up" first
            s = start_server(args=args, binary=binary)
        except RuntimeError:
            return
        assert s.proc.wait(20) != 0
        return
    r = start_server(args=args, binary=binary).client()
    wait_for(lambda: r.info("persistence")["loading"] == 0, 20, what="the AOF loaded")
    assert r.get("k") == "v" and r.get("after") == "2"
