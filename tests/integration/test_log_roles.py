"""The role letter after the pid in each log line, against Redis 7.0.15:
'M' for a master, 'S' once the server replicates a master (and 'M' again
after REPLICAOF NO ONE), 'C' for a forked child (BGSAVE's "DB saved on
disk" comes from the child)."""
import re
import time

import pytest

from conftest import REDIS_SERVER, SERVER

pytestmark = pytest.mark.differential


def wait_for(pred, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return False


def role_of(log, text):
    """The role letters of the lines that contain text."""
    return [m.group(1) for m in re.finditer(r"^\d+:([A-Z]) .*%s" % re.escape(text), log, re.M)]


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_roles(start_server, binary):
    master = start_server(binary=binary)
    m = master.client()
    m.set("k", "v")
    m.bgsave()
    assert wait_for(lambda: role_of(master.read_log(), "DB saved on disk"))
    assert role_of(master.read_log(), "DB saved on disk") == ["C"]
    assert role_of(master.read_log(), "Background saving started") == ["M"]

    replica = start_server(binary=binary)
    r = replica.client()
    r.replicaof("127.0.0.1", master.port)
    assert wait_for(lambda: r.info("replication")["master_link_status"] == "up")
    assert set(role_of(replica.read_log(), "Connecting to MASTER")) == {"S"}
    assert set(role_of(replica.read_log(), "MASTER <-> REPLICA sync: Finished with success")) == {"S"}
    r.replicaof("no", "one")
    assert wait_for(lambda: role_of(replica.read_log(), "MASTER MODE enabled"))
    r.bgsave()
    assert wait_for(lambda: len(role_of(replica.read_log(), "Background saving started")) >= 1)
    assert role_of(replica.read_log(), "Background saving started")[-1] == "M"
