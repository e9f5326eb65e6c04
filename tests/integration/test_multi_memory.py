"""A MULTI queue's memory against Debian's redis-server 7.0.15: CLIENT
LIST's multi-mem and argv-mem, the queue counted in tot-mem, and
maxmemory-clients evicting a client whose queue outgrows it (before, the
queue was in no count, so such a client was never evicted)."""
import pytest
import redis

from conftest import REDIS_SERVER, SERVER

pytestmark = pytest.mark.differential

BINARIES = [SERVER, REDIS_SERVER]
IDS = ["ours", "redis"]
VALUE = "x" * 100000


def row(observer, cmd):
    (me,) = [x for x in observer.client_list() if x["cmd"] == cmd]
    return {k: int(me[k]) for k in ("argv-mem", "multi-mem", "tot-mem", "multi")}


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_multi_mem_and_argv_mem(start_server, binary):
    s = start_server(binary=binary)
    c, o = s.client(), s.client()
    c.execute_command("MULTI")
    for i in range(3):
        c.execute_command("SET", "k%d" % i, VALUE)
    r = row(o, "set")
    # the three commands' arguments (3 x 100,005 bytes) and a little per entry
    assert r["multi"] == 3
    assert 300015 <= r["multi-mem"] <= 300015 + 3 * 64
    assert r["tot-mem"] >= r["multi-mem"]
    assert r["argv-mem"] == 0  # nothing running
    c.execute_command("EXEC")
    after = row(o, "exec")
    assert after["multi-mem"] == 0 and after["multi"] == -1
    assert after["tot-mem"] < r["tot-mem"] - 250000
    # the caller's own row: its running command's arguments, "client" "list"
    (mine,) = [x for x in o.client_list() if x["cmd"] == "client|list"]
    assert mine["argv-mem"] == "10"


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
def test_maxmemory_clients_evicts_a_big_queue(start_server, binary):
    s = start_server(["--maxmemory-clients", "2mb"], binary=binary)
    # one connection, no pool: a pool would replace the evicted connection
    # with a new one (outside MULTI) when the close arrives between commands
    c, o = s.client(single_connection_client=True), s.client()
    c.execute_command("MULTI")
    with pytest.raises(redis.ConnectionError):
        for i in range(40):  # 4 MB queued at most
            c.execute_command("SET", "k%d" % i, VALUE)
    assert o.info("stats")["evicted_clients"] == 1
    assert [x["cmd"] for x in o.client_list()] == ["client|list"]
