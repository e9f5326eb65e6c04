"""oom-score-adj and oom-score-adj-values against Debian's redis-server
7.0.15: both servers start from this test's own OOM score, and the score
each writes to /proc/<pid>/oom_score_adj, for itself as master, as a
replica and for its BGSAVE child, must be the same; as must CONFIG GET
and the errors of bad values."""
import time

import pytest
import redis

from conftest import REDIS_SERVER, child_pids

pytestmark = pytest.mark.differential

BINARIES = ["ours", REDIS_SERVER]


# Both servers start with this score (util-linux's choom), so that
# "relative" is told apart from "absolute".
BASE = 100
LAUNCHER = ["/usr/bin/choom", "-n", str(BASE), "--"]


def start(start_server, binary, args=()):
    args = list(args) + ["--enable-debug-command", "local"] if binary != "ours" else list(args)
    if binary == "ours":
        return start_server(args, launcher=LAUNCHER)
    return start_server(args, binary=binary, launcher=LAUNCHER)


def score(pid):
    with open("/proc/%d/oom_score_adj" % pid) as f:
        return int(f.read())


def wait_score(pid, want, secs=5):
    deadline = time.time() + secs
    while time.time() < deadline:
        if score(pid) == want:
            return True
        time.sleep(0.02)
    return score(pid) == want


def child_score(s, r):
    """The score of s's BGSAVE child, read while it runs (a million keys
    keep it busy long enough to be seen).  A child starts with its
    parent's score and sets its own first thing: a value still equal to
    the parent's is read again until it changes or the child ends."""
    parent = score(s.proc.pid)
    r.execute_command("DEBUG", "POPULATE", "1000000", "k", "64")
    r.bgsave()
    deadline = time.time() + 20
    seen = None
    while time.time() < deadline:
        for kid in child_pids(s.proc.pid):
            try:
                seen = score(kid)
            except OSError:
                continue
            if seen != parent:
                return seen
        if seen is not None and not child_pids(s.proc.pid):
            return seen
        time.sleep(0.002)
    if seen is None:
        raise AssertionError("no BGSAVE child seen")
    return seen


def run_sequence(start_server, binary):
    base = BASE
    seen = {}
    s = start(start_server, binary, ["--oom-score-adj", "yes", "--oom-score-adj-values", "10 200 300"])
    r = s.client()
    seen["started"] = score(s.proc.pid)
    seen["relative master"] = score(s.proc.pid) - base
    seen["get yes"] = r.config_get("oom-score-adj*")
    other = start(start_server, binary)
    r.replicaof("127.0.0.1", other.port)
    seen["relative replica"] = wait_score(s.proc.pid, base + 200) and score(s.proc.pid) - base
    r.replicaof("no", "one")
    seen["back to master"] = wait_score(s.proc.pid, base + 10) and score(s.proc.pid) - base
    r.config_set("oom-score-adj", "absolute")
    r.config_set("oom-score-adj-values", "50 250 350")
    seen["absolute master"] = score(s.proc.pid)
    seen["absolute child"] = child_score(s, r)
    r.config_set("oom-score-adj", "no")
    seen["off"] = score(s.proc.pid) - base
    for bad in ("1 2", "1 2 3000", "a b c"):
        try:
            r.config_set("oom-score-adj-values", bad)
            seen["set " + bad] = "ok"
        except redis.ResponseError as e:
            seen["set " + bad] = str(e)
    try:
        r.config_set("oom-score-adj", "maybe")
        seen["set maybe"] = "ok"
    except redis.ResponseError as e:
        seen["set maybe"] = str(e)
    seen["get after"] = r.config_get("oom-score-adj*")
    return seen


def test_oom_score_like_redis(start_server):
    ours = run_sequence(start_server, "ours")
    ref = run_sequence(start_server, REDIS_SERVER)
    assert ours == ref
    # and what they agree on is what the settings say
    assert ours["relative master"] == 10 and ours["relative replica"] == 200
    assert ours["absolute master"] == 50 and ours["absolute child"] == 350
    assert ours["off"] == 0 and ours["started"] == BASE + 10


def test_default_leaves_the_score_alone(start_server):
    s = start_server(launcher=LAUNCHER)
    assert score(s.proc.pid) == BASE
    assert s.client().config_get("oom-score-adj*") == {"oom-score-adj": "no", "oom-score-adj-values": "0 200 800"}
