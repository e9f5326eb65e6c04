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


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_writable_replica_expires_its_own_keys(start_server, binary):
    """replica-read-only no: the keys the replica's own clients gave a TTL
    are deleted by its cron (Redis's slaveKeysWithExpire, counted by INFO's
    slave_expires_tracked_keys); the master's keys still wait for its DEL."""
    import time
    debug = ["--enable-debug-command", "yes"]
    m = start_server(args=debug, binary=binary)
    s = start_server(args=debug + ["--replica-read-only", "no"], binary=binary)
    mc = redis.Redis(port=m.port, decode_responses=True)
    sc = redis.Redis(port=s.port, decode_responses=True)
    sc.replicaof("127.0.0.1", m.port)
    wait_link_up(sc)
    mc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    mc.set("master-key", 1, px=50)
    wait_caught_up(mc, sc)
    sc.set("own-px", 1, px=50)
    sc.set("own-ex", 1)
    sc.pexpire("own-ex", 50)
    sc.set("own-long", 1, ex=1000)
    sc.select(3)
    sc.set("own-db3", 1, px=50)
    sc.select(0)
    assert sc.info("stats")["slave_expires_tracked_keys"] == 4
    deadline = time.time() + 10
    while time.time() < deadline and (sc.info("keyspace").get("db3") or sc.dbsize() != 2):
        time.sleep(0.05)
    # the cron deleted the replica's own expired keys, in every db ...
    assert "db3" not in sc.info("keyspace")
    raw = redis.Redis(port=s.port, decode_responses=True)
    with pytest.raises(redis.exceptions.ResponseError):
        raw.execute_command("DEBUG", "OBJECT", "own-px")
    with pytest.raises(redis.exceptions.ResponseError):
        raw.execute_command("DEBUG", "OBJECT", "own-ex")
    # ... not the master's, which waits for the master's DEL, nor a live one
    assert "refcount" in raw.execute_command("DEBUG", "OBJECT", "master-key")
    assert sc.ttl("own-long") > 0
    assert sc.dbsize() == 2
    assert sc.info("stats")["slave_expires_tracked_keys"] == 1
    assert sc.info("stats")["expired_keys"] == 3
    mc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    deadline = time.time() + 10
    while time.time() < deadline and sc.dbsize() != 1:
        time.sleep(0.05)
    assert sc.dbsize() == 1  # the master's DEL came
    sc.flushall()
    assert sc.info("stats")["slave_expires_tracked_keys"] == 0
