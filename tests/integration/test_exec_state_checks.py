"""EXEC is checked as the commands it will run (Redis 7.0): a transaction
queued while the server could take it is aborted with EXECABORT and the
reason when the state changed before EXEC (min-replicas-to-write no longer
met, the replica lost its master with replica-serve-stale-data no, memory
over maxmemory), and nothing of it runs.  A transaction of commands allowed
in the new state still runs.  BGSAVE, BGREWRITEAOF and CONFIG SET
appendonly inside EXEC schedule their fork for after the transaction (a
fork in the middle would save half of it).  Each case runs on our server
and on redis-server 7.0.15."""
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER
from repl_helpers import closed_loopback_port, wait_for

pytestmark = pytest.mark.differential

BOTH = pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])



def exec_error(c):
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("EXEC")
    return str(e.value)


@BOTH
def test_exec_aborts_when_min_replicas_is_no_longer_met(start_server, binary):
    s = start_server(binary=binary)
    c, admin = s.client(), s.client()
    c.set("xx", 1)
    c.execute_command("MULTI")
    assert c.execute_command("INCR", "xx") == "QUEUED"
    admin.config_set("min-replicas-to-write", 2)
    assert exec_error(c).startswith("Transaction discarded because of: NOREPLICAS")
    assert c.get("xx") == "1"
    # a transaction of reads runs whatever the replicas
    c.execute_command("MULTI")
    c.execute_command("GET", "xx")
    assert c.execute_command("EXEC") == ["1"]


@BOTH
def test_exec_aborts_on_a_replica_that_went_stale(start_server, binary):
    s = start_server(args=["--replica-serve-stale-data", "no"], binary=binary)
    c, admin = s.client(), s.client()
    c.set("xx", 1)
    for queued in (("GET", "xx"), ("PING",)):
        c.execute_command("MULTI")
        c.execute_command(*queued)
        admin.execute_command("REPLICAOF", "127.0.0.1", closed_loopback_port())
        assert exec_error(c).startswith("Transaction discarded because of: MASTERDOWN")
        admin.execute_command("REPLICAOF", "NO", "ONE")
    # queued on a stale replica, run once it is a master again
    admin.execute_command("REPLICAOF", "127.0.0.1", closed_loopback_port())
    c.execute_command("MULTI")
    admin.execute_command("REPLICAOF", "NO", "ONE")
    c.execute_command("GET", "xx")
    assert c.execute_command("EXEC") == ["1"]


@BOTH
def test_exec_aborts_when_memory_went_over_maxmemory(start_server, binary):
    s = start_server(binary=binary)
    c, admin = s.client(), s.client()
    c.execute_command("MULTI")
    c.execute_command("SET", "k", "v")
    admin.config_set("maxmemory", 1)
    assert exec_error(c).startswith("Transaction discarded because of: OOM")
    # reads queued before the limit still run
    admin.config_set("maxmemory", 0)
    c.execute_command("MULTI")
    c.execute_command("GET", "k")
    admin.config_set("maxmemory", 1)
    assert c.execute_command("EXEC") == [None]
    # over the limit nothing can be queued, and DISCARD still works
    c.execute_command("MULTI")
    with pytest.raises(redis.ResponseError, match="^OOM"):
        c.execute_command("GET", "k")
    assert c.execute_command("DISCARD") == "OK"
    admin.config_set("maxmemory", 0)
    assert c.get("k") is None


def log_has(server, text, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(server.log_path, errors="replace") as f:
            if text in f.read():
                return True
        time.sleep(0.05)
    return False


@BOTH
def test_forks_inside_exec_are_scheduled(start_server, binary):
    s = start_server(binary=binary)
    c = s.client()
    forks = c.info("stats")["total_forks"]
    c.execute_command("MULTI")
    c.execute_command("SET", "foo", "bar")
    c.execute_command("BGSAVE")
    c.execute_command("SET", "foo2", "bar2")
    assert c.execute_command("EXEC") == ["OK", "Background saving scheduled", "OK"]
    wait_for(lambda: c.info("stats")["total_forks"] > forks and c.info("persistence")["rdb_bgsave_in_progress"] == 0,
               timeout=15)
    assert c.info("persistence")["rdb_changes_since_last_save"] == 0  # both SETs are in the snapshot

    forks = c.info("stats")["total_forks"]
    c.execute_command("MULTI")
    c.execute_command("SET", "foo", "baz")
    c.execute_command("BGREWRITEAOF")
    res = c.execute_command("EXEC")
    assert res[1] == "Background append only file rewriting scheduled"
    wait_for(lambda: c.info("stats")["total_forks"] > forks and
               c.info("persistence")["aof_rewrite_in_progress"] == 0, timeout=15)

    forks = c.info("stats")["total_forks"]
    c.execute_command("MULTI")
    c.execute_command("SET", "foo", "qux")
    c.execute_command("CONFIG", "SET", "appendonly", "yes")
    assert c.execute_command("EXEC") == ["OK", "OK"]
    assert log_has(s, "AOF was enabled during a transaction. An AOF background was scheduled to start when possible.")
    wait_for(lambda: c.info("persistence")["aof_enabled"] == 1 and c.info("stats")["total_forks"] > forks and
               c.info("persistence")["aof_rewrite_in_progress"] == 0, timeout=15)
