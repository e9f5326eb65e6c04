"""activerehashing and DEBUG HTSTATS against Debian's redis-server 7.0.15.

After most keys are deleted the cron starts shrinking the keyspace table
either way, but only with `activerehashing yes` does it finish the resize
while no command touches the table: with `no`, DEBUG HTSTATS still shows a
"rehashing target" on an idle server (and the old table's memory is
held), and the resize ends within a few cron runs of turning the setting
on.  HTSTATS's sections, empty-table lines and errors are Redis's; the
figures of a non-empty table are our table's own (buckets, not chains).

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_activerehashing.py"""
import time

import pytest
import redis

from conftest import REDIS_SERVER

pytestmark = pytest.mark.differential

BINARIES = ["ours", REDIS_SERVER]
KEYS = 200000
KEPT = 1000
EMPTY = ("[Dictionary HT]\nHash table 0 stats (main hash table):\nNo stats available for empty dictionaries\n"
         "[Expires HT]\nHash table 0 stats (main hash table):\nNo stats available for empty dictionaries\n")


def start(start_server, binary):
    if binary == "ours":
        return start_server().client()
    return start_server(["--enable-debug-command", "local"], binary=binary).client()


def htstats(c):
    return c.execute_command("DEBUG", "HTSTATS", 0)


def resizing(c):
    return "rehashing target" in htstats(c)


@pytest.mark.parametrize("binary", BINARIES)
def test_htstats_sections_and_errors(start_server, binary):
    c = start(start_server, binary)
    assert htstats(c) == EMPTY
    with pytest.raises(redis.ResponseError, match="^Out of range database$"):
        c.execute_command("DEBUG", "HTSTATS", 16)
    with pytest.raises(redis.ResponseError, match="^value is not an integer or out of range$"):
        c.execute_command("DEBUG", "HTSTATS", "x")
    c.set("a", "1")
    c.set("b", "2", ex=100)
    text = htstats(c)
    assert " number of elements: 2\n" in text and "rehashing target" not in text
    expires = text.split("[Expires HT]\n")[1]
    assert expires.startswith("Hash table 0 stats (main hash table):\n") and " number of elements: 1" in expires


@pytest.mark.parametrize("binary", BINARIES)
def test_idle_resize_waits_for_activerehashing(start_server, binary):
    c = start(start_server, binary)
    assert c.config_get("activerehashing") == {"activerehashing": "yes"}
    c.config_set("activerehashing", "no")
    assert c.config_get("activerehashing") == {"activerehashing": "no"}
    c.execute_command("DEBUG", "POPULATE", KEYS, "key", 8)
    p = c.pipeline(transaction=False)
    for first in range(KEPT, KEYS, 1000):
        p.delete(*["key:%d" % i for i in range(first, first + 1000)])
    p.execute()
    assert c.dbsize() == KEPT
    time.sleep(1.0)                      # ten cron runs, no command on the keys
    assert resizing(c)                   # a shrink started and not finished
    held = c.info("memory")["used_memory"]
    c.config_set("activerehashing", "yes")
    deadline = time.time() + 10
    while resizing(c):
        assert time.time() < deadline, "the resize did not finish"
        time.sleep(0.1)
    assert c.info("memory")["used_memory"] < held       # the old table went
    assert c.dbsize() == KEPT and c.get("key:0") is not None
