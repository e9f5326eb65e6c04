"""Scale-out behind twemproxy (Debian's nutcracker): utils/tools/cluster-up starts
3 instances and a proxy on loopback; keys written through the proxy are
readable through it, spread over every instance, and killing one instance
only fails its own keys."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import ROOT, SERVER, free_port

CLUSTER_UP = os.path.join(ROOT, "utils", "tools", "cluster-up")
NKEYS = 10000


@pytest.fixture(scope="module")
def cluster():
    d = tempfile.mkdtemp(prefix="rl-cluster-")
    env = dict(os.environ, CLUSTER_DIR=d, RL_SERVER=SERVER, PROXY_PORT=str(free_port()),
               STATS_PORT=str(free_port()))
    # Three consecutive free ports for the instances.
    while True:
        base = free_port()
        if base < 65000 and all(_port_free(base + i) for i in range(3)):
            break
    env["BASE_PORT"] = str(base)
    subprocess.run([CLUSTER_UP, "start", "3"], env=env, check=True, timeout=30, capture_output=True)
    try:
        yield {"dir": d, "proxy": int(env["PROXY_PORT"]), "ports": [base + i for i in range(3)]}
    finally:
        subprocess.run([CLUSTER_UP, "stop"], env=env, timeout=30, capture_output=True)
    for name in ("nutcracker.pid", "rl0.pid", "rl1.pid", "rl2.pid"):
        assert not os.path.exists(os.path.join(d, name)), "cluster-up stop left " + name
    shutil.rmtree(d, ignore_errors=True)


def _port_free(port):
    import socket
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def proxy_client(cluster):
    return redis.Redis(host="127.0.0.1", port=cluster["proxy"], decode_responses=True, socket_timeout=10)


def test_keys_spread_and_survive_one_instance(cluster):
    px = proxy_client(cluster)
    keys = ["key:%d" % i for i in range(NKEYS)]
    for start in range(0, NKEYS, 1000):
        pipe = px.pipeline(transaction=False)
        for k in keys[start:start + 1000]:
            pipe.set(k, "v-" + k)
        assert all(pipe.execute())
    # All readable through the proxy (MGET is split across shards by it).
    for start in range(0, NKEYS, 500):
        chunk = keys[start:start + 500]
        assert px.mget(chunk) == ["v-" + k for k in chunk]
    # Each instance holds a share; together exactly the keys written.
    owner = {}
    for idx, port in enumerate(cluster["ports"]):
        direct = redis.Redis(host="127.0.0.1", port=port, decode_responses=True)
        held = set(direct.scan_iter(count=1000))
        assert len(held) > NKEYS // 10, "instance %d holds only %d keys" % (idx, len(held))
        for k in held:
            assert k not in owner
            owner[k] = idx
        direct.close()
    assert set(owner) == set(keys)
    # Kill instance 1 by its pid: only its keys fail, the others still serve.
    with open(os.path.join(cluster["dir"], "rl1.pid")) as f:
        pid = int(f.read())
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    sample = keys[::10]
    pipe = px.pipeline(transaction=False)
    for k in sample:
        pipe.get(k)
    results = pipe.execute(raise_on_error=False)
    for k, res in zip(sample, results):
        if owner[k] == 1:
            assert isinstance(res, Exception), (k, res)
        else:
            assert res == "v-" + k, (k, res)
    assert any(owner[k] == 1 for k in sample)
    # Writes to the surviving shards keep working too.
    live = next(k for k in sample if owner[k] != 1)
    assert px.set(live, "new") and px.get(live) == "new"
    px.close()


def test_unsupported_commands_close_the_connection(cluster):
    """twemproxy answers commands it cannot shard (KEYS, SUBSCRIBE, MULTI)
    by closing the client connection: documented in docs/scale-out.md."""
    px = proxy_client(cluster)
    for cmd in (("KEYS", "*"), ("SUBSCRIBE", "x"), ("MULTI",)):
        with pytest.raises(redis.ConnectionError):
            px.execute_command(*cmd)
    px.close()
