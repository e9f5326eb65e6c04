"""CLIENT PAUSE WRITE as Redis 7.0.15 applies it, each case on our server
and on redis-server (differential): a script is held or not by the flags
it declares (a no-writes EVAL, EVAL_RO, EVALSHA and FCALL run during the
pause, a script without flags waits), also inside MULTI; a read-only
script may not PUBLISH (a command that may replicate would slip past the
pause); and a paused replica stops applying its master's stream: it reads
it (slave_read_repl_offset moves) but its offset and data stay put until
the pause ends."""
import threading

import pytest
import redis

from conftest import REDIS_SERVER, SERVER
from repl_helpers import wait_for

pytestmark = pytest.mark.differential

BOTH = pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])

RO_LIB = "#!lua name=f1\nredis.register_function{function_name='f1', callback=function() return 'hello' end, " \
         "flags={'no-writes'}}"


@BOTH
def test_read_only_scripts_run_during_a_write_pause(start_server, binary):
    s = start_server(binary=binary)
    admin = s.client()
    admin.set("x", "y")
    admin.function_load(RO_LIB)
    sha = admin.script_load("#!lua flags=no-writes\nreturn 2")
    admin.execute_command("CLIENT", "PAUSE", 60000, "WRITE")
    try:
        c = s.client(socket_timeout=5)
        assert c.eval("#!lua flags=no-writes\nreturn 'unique script'", 0) == "unique script"
        assert c.eval("#!lua flags=no-writes\nreturn 'unique script'", 0) == "unique script"  # cached now
        assert c.execute_command("EVAL_RO", "return redis.call('GeT', 'x')..' unique'", 1, "x") == "y unique"
        assert c.evalsha(sha, 0) == 2
        assert c.fcall("f1", 0) == "hello"
        # inside MULTI too
        p = c.pipeline(transaction=True)
        p.eval("#!lua flags=no-writes\nreturn 12", 0)
        p.eval("#!lua flags=no-writes\nreturn 13", 0)
        assert p.execute() == [12, 13]
        assert admin.info("clients")["blocked_clients"] == 0
        # a script without flags may write: it waits for the pause
        result = []
        t = threading.Thread(target=lambda: result.append(s.client().eval("return 1", 0)))
        t.start()
        wait_for(lambda: admin.info("clients")["blocked_clients"] == 1, timeout=5)
        assert result == []
    finally:
        admin.execute_command("CLIENT", "UNPAUSE")
    t.join(5)
    assert result == [1]


@BOTH
def test_read_only_scripts_may_not_publish(start_server, binary):
    s = start_server(binary=binary)
    c = s.client()
    for call in (lambda: c.execute_command("EVAL_RO", "return redis.call('publish', 'ch', 'msg')", 0),
                 lambda: c.eval("#!lua flags=no-writes\nreturn redis.call('publish', 'ch', 'msg')", 0)):
        with pytest.raises(redis.ResponseError, match="^Write commands are not allowed from read-only scripts"):
            call()
    assert c.eval("return redis.call('publish', 'ch', 'msg')", 0) == 0


@BOTH
def test_a_paused_replica_stops_applying_its_master_stream(start_server, binary):
    master = start_server(binary=binary)
    replica = start_server(binary=binary)
    m, r = master.client(), replica.client()
    m.config_set("repl-ping-replica-period", 3600)  # no PINGs to move the offsets
    r.execute_command("REPLICAOF", "127.0.0.1", master.port)
    wait_for(lambda: r.info("replication")["master_link_status"] == "up", timeout=20)
    m.set("foo", "bar")
    wait_for(lambda: r.info("replication")["slave_repl_offset"] == m.info("replication")["master_repl_offset"])
    old = m.info("replication")["master_repl_offset"]
    r.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    try:
        m.set("foo2", "bar2")
        new = m.info("replication")["master_repl_offset"]
        wait_for(lambda: r.info("replication")["slave_read_repl_offset"] == new, timeout=10)
        assert r.info("replication")["slave_repl_offset"] == old
        assert r.get("foo2") is None
    finally:
        r.execute_command("CLIENT", "UNPAUSE")
    wait_for(lambda: r.info("replication")["slave_repl_offset"] == new, timeout=10)
    assert r.get("foo2") == "bar2"
