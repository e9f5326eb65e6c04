"""shutdown-on-sigterm and shutdown-on-sigint (Redis 7.0): what a signal's
shutdown does, as SHUTDOWN's options would (save, nosave, now, force).

Checked against Redis 7.0.15: the parameter's values and errors, a final
save added or skipped, and FORCE exiting where a plain signal is refused
(the first AOF still being written)."""
import os
import signal
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER

BOTH = [SERVER, REDIS_SERVER]


def start(start_server, binary, d, *extra):
    os.makedirs(d, exist_ok=True)
    return start_server(binary=binary, args=["--dir", str(d)] + list(extra))


@pytest.mark.parametrize("name", ["shutdown-on-sigterm", "shutdown-on-sigint"])
def test_values_and_errors_as_redis(start_server, tmp_path, name):
    seen = []
    for binary in BOTH:
        r = start(start_server, binary, tmp_path / os.path.basename(binary), "--save", "").client()
        out = [r.config_get(name)]
        for v in ["save", "nosave force", "NOW", "force default", "default", "save nosave", "bogus", ""]:
            try:
                out.append(r.config_set(name, v))
            except redis.ResponseError as e:
                out.append(str(e))
            out.append(r.config_get(name))
        seen.append(out)
    assert seen[0] == seen[1]
    assert seen[0][0] == {name: "default"}
    assert {name: "nosave force"} in seen[0]


def test_config_file_takes_several_words(start_server, tmp_path):
    for binary in BOTH:
        s = start_server(binary=binary, config_text="shutdown-on-sigterm nosave now\nshutdown-on-sigint \"save force\"\n",
                         args=["--dir", str(tmp_path), "--save", ""])
        assert s.client().config_get("shutdown-on-sig*") == {"shutdown-on-sigterm": "nosave now",
                                                             "shutdown-on-sigint": "save force"}
        s.stop()


@pytest.mark.parametrize("sig,name", [(signal.SIGTERM, "shutdown-on-sigterm"), (signal.SIGINT, "shutdown-on-sigint")])
@pytest.mark.parametrize("setting,saves", [("default", True), ("nosave", False)])
def test_final_save_follows_the_setting(start_server, tmp_path, sig, name, setting, saves):
    # With a save point the final save happens unless the setting says
    # nosave; "save" adds one where no save point asks for it.
    for binary in BOTH:
        d = tmp_path / os.path.basename(binary)
        s = start(start_server, binary, d, "--save", "3600 1", "--" + name, setting)
        s.client().set("k", "v")
        s.proc.send_signal(sig)
        assert s.proc.wait(timeout=10) == 0
        assert os.path.exists(d / "dump.rdb") == saves, (binary, setting)


def test_save_flag_saves_without_save_points(start_server, tmp_path):
    for binary in BOTH:
        d = tmp_path / os.path.basename(binary)
        s = start(start_server, binary, d, "--save", "", "--shutdown-on-sigterm", "save")
        s.client().set("k", "v")
        s.proc.terminate()
        assert s.proc.wait(timeout=10) == 0
        s = start(start_server, binary, d, "--save", "")
        assert s.client().get("k") == "v"
        s.stop()


def test_force_exits_while_the_first_aof_is_written(start_server, tmp_path):
    for binary in BOTH:
        d = tmp_path / os.path.basename(binary)
        s = start(start_server, binary, d, "--save", "", "--rdb-key-save-delay", "100000",
                  "--shutdown-on-sigterm", "force")
        r = s.client()
        for i in range(50):
            r.set("k%d" % i, i)
        r.config_set("appendonly", "yes")        # a 5 s rewrite
        assert r.info("persistence")["aof_rewrite_in_progress"] == 1
        t0 = time.time()
        s.proc.terminate()
        assert s.proc.wait(timeout=10) == 0
        assert time.time() - t0 < 4                # did not wait for the rewrite
        assert "Writing initial AOF. Exit anyway." in s.read_log(), binary


# ------------------------------------------------ waiting for replicas

def master_with_stopped_replica(start_server, binary, tmp_path, *extra):
    """A master (with one write its replica never acknowledged: the replica
    is stopped with SIGSTOP) and the stopped replica's process."""
    d = tmp_path / ("m-" + os.path.basename(binary))
    master = start(start_server, binary, d, "--save", "", "--repl-diskless-sync-delay", "0", *extra)
    replica = start(start_server, binary, tmp_path / ("r-" + os.path.basename(binary)), "--save", "",
                    "--replicaof", "127.0.0.1", str(master.port))
    m = master.client()
    m.set("before", "1")
    deadline = time.time() + 20
    while m.info("replication").get("slave0", {}).get("state") != "online" or m.wait(1, 100) < 1:
        assert time.time() < deadline, "the replica did not catch up"
        time.sleep(0.05)
    time.sleep(1.2)                    # its next ACK reports the offset
    replica.proc.send_signal(signal.SIGSTOP)
    m.set("unacknowledged", "1")
    return master, replica


def shutdown_async(port, *args):
    """SHUTDOWN from a thread of its own; returns (thread, result list)."""
    import threading
    out = []

    def run():
        c = redis.Redis(host="127.0.0.1", port=port, socket_timeout=30)
        try:
            out.append(c.execute_command("SHUTDOWN", *args))
        except redis.ConnectionError:
            out.append("closed")
        except redis.ResponseError as e:
            out.append(str(e))
    t = threading.Thread(target=run)
    t.start()
    return t, out


def resume(replica):
    replica.proc.send_signal(signal.SIGCONT)


@pytest.mark.parametrize("binary", BOTH)
def test_shutdown_waits_for_lagging_replicas_then_exits(start_server, tmp_path, binary):
    master, replica = master_with_stopped_replica(start_server, binary, tmp_path, "--shutdown-timeout", "3")
    try:
        t0 = time.time()
        t, out = shutdown_async(master.port)
        time.sleep(1)
        assert master.proc.poll() is None and not out            # waiting, the caller too
        with pytest.raises(redis.TimeoutError):                   # writes are held meanwhile
            redis.Redis(host="127.0.0.1", port=master.port, socket_timeout=0.5).set("during", "1")
        assert master.proc.wait(timeout=10) == 0
        t.join()
        assert out == ["closed"]
        assert 2.5 < time.time() - t0 < 8
        log = master.read_log()
        assert "Waiting for replicas before shutting down." in log
        assert "Lagging replica" in log and "0 of 1 replicas are in sync when shutting down." in log
    finally:
        resume(replica)


@pytest.mark.parametrize("binary", BOTH)
def test_shutdown_abort_and_now(start_server, tmp_path, binary):
    master, replica = master_with_stopped_replica(start_server, binary, tmp_path, "--shutdown-timeout", "30")
    try:
        m = master.client()
        with pytest.raises(redis.ResponseError, match="No shutdown in progress"):
            m.execute_command("SHUTDOWN", "ABORT")
        t, out = shutdown_async(master.port)
        time.sleep(0.5)
        assert m.execute_command("SHUTDOWN", "ABORT") in ("OK", b"OK", True)
        t.join(timeout=10)
        assert out == ["Errors trying to SHUTDOWN. Check logs."]
        assert m.set("after-abort", "1")                          # writes flow again
        with pytest.raises(redis.ResponseError, match="syntax error"):
            m.execute_command("SHUTDOWN", "NOW", "ABORT")
        # NOW: no waiting for the replica.
        t0 = time.time()
        t, out = shutdown_async(master.port, "NOW")
        assert master.proc.wait(timeout=10) == 0
        t.join()
        assert time.time() - t0 < 3 and out == ["closed"]
    finally:
        resume(replica)


@pytest.mark.parametrize("binary", BOTH)
def test_caught_up_replica_ends_the_wait(start_server, tmp_path, binary):
    master, replica = master_with_stopped_replica(start_server, binary, tmp_path, "--shutdown-timeout", "60")
    t0 = time.time()
    master.proc.terminate()                                       # SIGTERM waits as SHUTDOWN does
    time.sleep(1)
    assert master.proc.poll() is None
    resume(replica)                                               # its ACK ends the wait
    assert master.proc.wait(timeout=15) == 0
    assert time.time() - t0 < 15
    assert "1 of 1 replicas are in sync when shutting down." in master.read_log()


@pytest.mark.parametrize("binary", BOTH)
def test_shutdown_nosave_of_a_busy_script_refuses_new_clients(start_server, tmp_path, binary):
    """SHUTDOWN NOSAVE ends a script past busy-reply-threshold; once the
    caller sees its link close, a new connection is refused (Redis 7.0.15's
    suite checks this: the server stopped listening before it let the
    caller go, not after freeing everything)."""
    import socket
    s = start(start_server, binary, tmp_path / os.path.basename(binary), "--save", "",
              "--busy-reply-threshold", "100")
    busy = socket.create_connection(("127.0.0.1", s.port))
    busy.sendall(b"EVAL \"while true do end\" 0\r\n")
    other = socket.create_connection(("127.0.0.1", s.port))
    deadline = time.time() + 10
    while True:
        other.sendall(b"PING\r\n")
        reply = other.recv(200)
        if reply.startswith(b"-BUSY"):
            break
        assert time.time() < deadline, reply
        time.sleep(0.05)
    other.sendall(b"SHUTDOWN NOSAVE\r\n")
    assert other.recv(200) == b""            # no reply: the link closes
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", s.port), timeout=2)
    assert s.proc.wait(timeout=10) == 0
