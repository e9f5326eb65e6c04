"""Debian's Redis Sentinel managing our servers: three Sentinels on
loopback monitor one master and two replicas (all redis-like).  Under a
write load from redis-py's Sentinel client, the master is killed with
SIGKILL: a replica is promoted, the other follows it, the client
reconnects, and every write acknowledged with WAIT 1 before the kill is
on the new master.  Then SENTINEL FAILOVER moves the master again.

Sentinels are child processes of the test, stopped by pid."""
import os
import shutil
import subprocess
import tempfile
import threading
import time

import pytest
import redis
from redis.sentinel import Sentinel

from conftest import free_port
from repl_helpers import wait_for, wait_link_up

SENTINEL_BIN = "/usr/bin/redis-sentinel"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not os.path.exists(SENTINEL_BIN),
                                 reason="redis-sentinel missing: run utils/install-deps.sh test")]


class SentinelProcess:
    def __init__(self, master_port, down_after_ms):
        self.port = free_port()
        self.down_after_ms = down_after_ms
        self.dir = tempfile.mkdtemp(prefix="rl-sentinel-")
        conf = os.path.join(self.dir, "sentinel.conf")
        with open(conf, "w") as f:
            f.write("port %d\nbind 127.0.0.1\ndaemonize no\ndir %s\n" % (self.port, self.dir))
            f.write("sentinel monitor mymaster 127.0.0.1 %d 2\n" % master_port)
            f.write("sentinel down-after-milliseconds mymaster %d\n" % down_after_ms)
            f.write("sentinel failover-timeout mymaster 6000\n")
            f.write("sentinel parallel-syncs mymaster 2\n")
        self.log = open(os.path.join(self.dir, "sentinel.log"), "w")
        self.proc = subprocess.Popen([SENTINEL_BIN, conf], stdout=self.log, stderr=subprocess.STDOUT, cwd=self.dir)
        self.client = redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True, socket_timeout=5)
        wait_for(self._up, 10, what="sentinel up")

    def _up(self):
        try:
            return self.client.ping()
        except redis.ConnectionError:
            return False

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class Writer(threading.Thread):
    """SET w:<i> then WAIT 1; remembers which i were acknowledged."""

    def __init__(self, sentinel):
        super().__init__(daemon=True)
        self.master = sentinel.master_for("mymaster", socket_timeout=1, decode_responses=True)
        self.acked = []
        self.errors = 0
        self.stop_flag = threading.Event()
        self.after_kill = threading.Event()
        self.written_after_kill = 0

    def run(self):
        i = 0
        while not self.stop_flag.is_set():
            i += 1
            try:
                self.master.set("w:%d" % i, i)
                if self.master.wait(1, 1000) >= 1:
                    self.acked.append(i)
                if self.after_kill.is_set():
                    self.written_after_kill += 1
            except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
                self.errors += 1   # READONLY / refused while the failover runs
                time.sleep(0.05)
            time.sleep(0.002)


# Each Sentinel's down-after-milliseconds.  Different, so that the
# automatic failover's election is not split three ways: when all three
# reach ODOWN together each votes for itself, nobody has a majority, and
# the next try waits 2 x failover-timeout (12 s here).  Staggered, the
# first two compete and the third, not yet in ODOWN, votes for whichever
# asks first.
DOWN_AFTER_MS = (2000, 3000, 5000)


def master_addr(s):
    return tuple(s.client.sentinel_get_master_addr_by_name("mymaster"))


def killed_is_false(cond):
    """cond, where a closed connection counts as "not yet": Sentinel ends
    with CLIENT KILL TYPE normal on every server it reconfigures, so a
    query of ours may meet that (redis-py reconnects on the next call)."""
    def check():
        try:
            return cond()
        except redis.ConnectionError:
            return False
    return check


def eligible_view(sn, port):
    """sn's view of replica port, once it is reachable and not down."""
    for r in sn.client.sentinel_slaves("mymaster"):
        if r["port"] == port and not {"s_down", "disconnected"} & set(r["flags"].split(",")):
            return r
    return None


def manual_failover(sn, port):
    """SENTINEL FAILOVER on sn, which must promote the replica on port.

    Sentinel never promotes a replica whose last reported
    master_link_down_since_seconds exceeds 10 x down-after, and keeps that
    report once the link is up (INFO then has no such line).  Replicas
    report it while they resync with the newly promoted master, counted
    from the old master's death, so a slow automatic failover (seconds
    here, over 20 s once in CI on a loaded machine) leaves the replica
    disqualified for good: NOGOODSLAVE.  We ask the Sentinel with the
    longest down-after; if its view is still stale, SENTINEL RESET makes it
    read the replicas afresh (what an operator would do)."""
    wait_for(lambda: eligible_view(sn, port) is not None, 30, step=0.2, what="sentinel sees the replica")
    stale = eligible_view(sn, port)["master-link-down-time"] > 10 * sn.down_after_ms
    if stale:
        sn.client.execute_command("SENTINEL", "RESET", "mymaster")
        wait_for(lambda: eligible_view(sn, port) is not None, 30, step=0.2, what="sentinel sees the replica after RESET")
    print("manual failover: replica's master-link-down-time %d ms%s" %
          (eligible_view(sn, port)["master-link-down-time"], ", after RESET" if stale else ""))

    # Sentinel answers INPROG while it is still finishing the automatic
    # failover above (reconfiguring replicas): ask again until it takes it.
    def accepted():
        try:
            return sn.client.execute_command("SENTINEL", "FAILOVER", "mymaster")
        except redis.ResponseError as e:
            if str(e).startswith("INPROG"):
                return False
            raise
    wait_for(accepted, 60, step=0.5, what="SENTINEL FAILOVER accepted")


def test_sentinel_failover_of_our_servers(start_server):
    m = start_server(args=["--repl-ping-replica-period", "1", "--repl-diskless-sync-delay", "0"])
    replicas = []
    for _ in range(2):
        s = start_server(args=["--repl-ping-replica-period", "1", "--repl-diskless-sync-delay", "0"])
        s.client().replicaof("127.0.0.1", m.port)
        replicas.append(s)
    for s in replicas:
        wait_link_up(s.client())
    sentinels = []
    try:
        for _ in range(3):
            sentinels.append(SentinelProcess(m.port, DOWN_AFTER_MS[len(sentinels)]))
        # Discovery: each Sentinel finds both replicas (INFO) and the others (hello).
        for sn in sentinels:
            wait_for(lambda: len(sn.client.sentinel_slaves("mymaster")) == 2 and
                     len(sn.client.sentinel_sentinels("mymaster")) == 2, 30, step=0.2, what="sentinel discovery")
        client = Sentinel([("127.0.0.1", sn.port) for sn in sentinels], socket_timeout=1)
        w = Writer(client)
        w.start()
        wait_for(lambda: len(w.acked) >= 50, 20, what="acknowledged writes before the kill")
        m.proc.kill()
        m.proc.wait()
        w.after_kill.set()
        killed_at = time.monotonic()
        old = ("127.0.0.1", m.port)
        wait_for(lambda: master_addr(sentinels[0]) != old, 40, step=0.2, what="failover")
        print("automatic failover %.1f s after the kill" % (time.monotonic() - killed_at))
        new_host, new_port = master_addr(sentinels[0])
        new_port = int(new_port)
        wait_for(lambda: w.written_after_kill >= 20, 30, what="the client writing to the new master")
        w.stop_flag.set()
        w.join(10)
        promoted = next(s for s in replicas if s.port == new_port)
        other = next(s for s in replicas if s.port != new_port)
        pc, oc = promoted.client(), other.client()
        assert pc.role()[0] == "master"
        missing = [i for i in w.acked if pc.get("w:%d" % i) != str(i)]
        assert not missing, "acknowledged writes lost: %r" % missing[:10]
        # The other replica follows the new master.
        wait_for(killed_is_false(lambda: oc.info("replication").get("master_port") == new_port and
                                 oc.info("replication")["master_link_status"] == "up"),
                 30, step=0.2, what="replica follows")
        pc.set("after-failover", "1")
        assert pc.wait(1, 5000) == 1
        assert oc.get("after-failover") == "1"
        # A manual failover through Sentinel moves the master to the other one.
        manual_failover(sentinels[2], other.port)
        wait_for(lambda: int(master_addr(sentinels[0])[1]) == other.port, 40, step=0.2, what="manual failover")
        wait_for(killed_is_false(lambda: oc.role()[0] == "master"), 20, what="promoted by SENTINEL FAILOVER")
        wait_for(killed_is_false(lambda: pc.info("replication").get("master_port") == other.port and
                                 pc.info("replication")["master_link_status"] == "up"),
                 30, step=0.2, what="old master follows")
        assert oc.get("after-failover") == "1"
    finally:
        for sn in sentinels:
            sn.stop()
