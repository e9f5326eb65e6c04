"""A write made right after a replica finished its diskless full sync
reaches that replica at once, on ours as on Debian's redis-server 7.0.15.

The replica tells its master it has loaded the RDB (its first REPLCONF
ACK) as soon as it has.  The master then reaps the RDB child at once and
starts the command stream, instead of holding the stream until its cron
notices the child ended (found with ioredis' cluster suite: with
`scaleReads: "slave"` a write made just after the cluster came up was
read back from a replica as missing).  hz 1 makes that cron tick rare, so
a held stream shows.  Redis reaps at the ACK too, but its child may end a
little after the ACK (it waits for the parent's relay to finish): then the
stream starts with the replica's next ACK, a second later; ours writes
the socket itself and has ended by then.

Then, on a replica in sync: a read sent right after the master answered a
write sees the write (the master's stream left with that answer).  A
replica on io_uring serves its clients through the ring and its master
link through epoll; it now reads the link before it runs the requests
that came with it, as Redis's replica (one event loop) in effect does."""
import statistics
import time

import pytest

from conftest import REDIS_SERVER, SERVER
from repl_helpers import wait_for

pytestmark = [pytest.mark.differential, pytest.mark.slow]


def first_write_delay(start_server, binary):
    """Seconds from the replica's link coming up to a write made then
    being readable on it."""
    m = start_server(args=["--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0", "--hz", "1"],
                     binary=binary)
    rm = m.client()
    rm.set("loaded", "in the RDB")
    rep = start_server(binary=binary)
    rs = rep.client()
    assert rs.replicaof("127.0.0.1", m.port)
    wait_for(lambda: rs.info("replication").get("master_link_status") == "up", 30, step=0.001,
             what="master_link_status:up")
    rm.set("first", "write")
    t0 = time.monotonic()
    wait_for(lambda: rs.get("first") == "write", 10, step=0.001, what="the first write on the replica")
    took = time.monotonic() - t0
    assert rs.get("loaded") == "in the RDB"
    assert rm.info("replication")["slave0"]["state"] == "online"
    m.stop()
    rep.stop()
    return took


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_first_write_after_diskless_sync_reaches_replica_at_once(start_server, binary):
    delays = [first_write_delay(start_server, binary) for _ in range(5)]
    # Never later than the replica's next ACK; as a rule at once.
    assert max(delays) < 1.6, delays
    if binary == SERVER:
        assert statistics.median(delays) < 0.25, delays


@pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
def test_read_after_write_on_a_replica_in_sync(start_server, binary):
    m = start_server(binary=REDIS_SERVER)  # the replica is what is compared
    rm = m.client()
    rep = start_server(binary=binary)
    rs = rep.client()
    assert rs.replicaof("127.0.0.1", m.port)
    wait_for(lambda: rs.info("replication").get("master_link_status") == "up", 30, what="master_link_status:up")
    rm.set("k", "start")
    wait_for(lambda: rs.get("k") == "start", 10, what="the replica in sync")
    stale = 0
    for i in range(400):
        rm.set("k", i)
        if rs.get("k") != str(i):
            stale += 1
    # Redis misses about none; before the fix ours missed some 5-60 %.
    assert stale <= 4, "%d of 400 reads right after the write missed it" % stale
