"""Keys past their TTL on a replica, against redis-server 7.0.15: the
replica keeps them until its master's DEL (DEBUG OBJECT still sees them;
clients do not), and on a writable replica a write to such a key deletes
it first and starts a new one without the old TTL (INCR gives 1, TTL -1),
as Redis does.  The same pair of commands runs on a master/replica pair of
each server, the master's active expiry off."""
import pytest
import redis

from conftest import REDIS_SERVER, SERVER
from repl_helpers import wait_caught_up, wait_link_up

pytestmark = pytest.mark.differential


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_expired_keys_on_a_replica(start_server, binary):
    debug = ["--enable-debug-command", "yes"]
    m = start_server(args=debug, binary=binary)
    s = start_server(args=debug, binary=binary)
    mc = redis.Redis(port=m.port, decode_responses=True)
    sc = redis.Redis(port=s.port, decode_responses=True)
    sc.replicaof("127.0.0.1", m.port)
    wait_link_up(sc)
    mc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    mc.set("key1", 5, px=10)
    mc.set("key2", 5, px=10)
    wait_caught_up(mc, sc)
    import time
    time.sleep(0.05)
    assert sc.dbsize() == 2 and sc.exists("key1", "key2") == 0
    assert "refcount" in sc.execute_command("DEBUG", "OBJECT", "key1")  # there, though expired
    sc.config_set("replica-read-only", "no")
    assert sc.incr("key1") == 1                     # the expired key went first
    assert sc.ttl("key1") == -1
    assert sc.get("key2") is None
    assert sc.dbsize() == 2                         # key2 stays until the master's DEL
