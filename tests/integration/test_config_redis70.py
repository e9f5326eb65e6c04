"""Configuration as Redis 7.0.15 reads and changes it, each case against
redis-server (differential): several `save` lines add up (the first
replaces the defaults), on the command line too; command-line words are
grouped as Redis groups them (a word starting with "--" is a value while
the option before it has none); start-up errors name the line as Redis
does; CONFIG SET port and bind listen again (a port in use is refused and
the old one kept); DEBUG CONFIG-REWRITE-FORCE-ALL writes a file that reads
back to the same configuration; hidden test knobs (key-load-delay) answer
CONFIG GET by exact name only; CLIENT LIST's qbuf counts the request that
runs, as Redis's query buffer holds it."""
import os
import socket
import subprocess
import tempfile
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER, free_port

pytestmark = pytest.mark.differential

BOTH = pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])


def save_points(binary, conf, args):
    """CONFIG GET save of a server started with this file and these words
    (not through the fixture: it adds `--save ""` to every server)."""
    port = free_port()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "test.conf")
        with open(path, "w") as f:
            f.write(conf)
        p = subprocess.Popen([binary, path, "--port", str(port), "--bind", "127.0.0.1", "--dir", d] + args,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            c = redis.Redis(port=port, decode_responses=True, socket_timeout=5)
            for _ in range(200):
                try:
                    return c.config_get("save")["save"]
                except redis.ConnectionError:
                    time.sleep(0.025)
            raise AssertionError("the server did not start")
        finally:
            p.terminate()
            p.wait(10)


@BOTH
@pytest.mark.parametrize("conf,args,want", [
    ("", [], "3600 1 300 100 60 10000"),
    ("save 900 1\n", [], "900 1"),
    ("save 900 1\nsave 300 10\n", [], "900 1 300 10"),
    ("save 900 1\n", ["--save", "100", "100"], "900 1 100 100"),
    ("save 900 1\nsave \"\"\nsave 60 5\n", [], "60 5"),
    ("save 900 1\n", ["--save"], ""),
    ("", ["--save", "--loglevel", "verbose"], ""),
], ids=["defaults", "one", "two-lines", "command-line-adds", "empty-resets", "bare-save-last", "bare-save-then-option"])
def test_save_lines_add_up(binary, conf, args, want):
    assert save_points(binary, conf, args) == want


def startup_error(binary, *args):
    """The start-up error a server prints for these command-line words."""
    port = free_port()
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([binary, "--port", str(port), "--dir", d, *args], capture_output=True, text=True,
                           timeout=10)
    assert p.returncode != 0
    out = p.stdout + p.stderr
    lines = out.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith(">>> "))
    return lines[i], lines[i + 1].split(" (command line")[0]


@pytest.mark.parametrize("args", [
    ["--port"],
    ["--loglevel"],
    ["--port", "6379", "6380"],
    ["--port", "--loglevel", "verbose"],
    ["--port", "--bla", "--loglevel", "verbose"],
    ["--logfile", "--my--log--file", "--loglevel", "--bla"],
    ["--shutdown-on-sigint"],
    ["--replicaof", "127.0.0.1", "abc"],
    ["--replicaof", "--127.0.0.1", "abc"],
    ["--replicaof", "--127.0.0.1", "--abc"],
], ids=lambda a: " ".join(a))
def test_command_line_errors(args):
    ours = startup_error(SERVER, *args)
    ref = startup_error(REDIS_SERVER, *args)
    assert ours[0] == ref[0]  # the line, words quoted as Redis quotes them
    assert ours[1] == ref[1] or (ours[1], ref[1]) == ("wrong number of arguments",
                                                     "Bad directive or wrong number of arguments")


@BOTH
def test_option_values_may_start_with_dashes(start_server, binary):
    s = start_server(args=["--proc-title-template", "--my--title--template", "--loglevel", "verbose"], binary=binary)
    c = s.client()
    assert c.config_get("proc-title-template")["proc-title-template"] == "--my--title--template"
    assert c.config_get("loglevel")["loglevel"] == "verbose"


def listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


@BOTH
def test_config_set_port_and_bind(start_server, binary):
    s = start_server(binary=binary)
    c = s.client()
    new = free_port()
    assert c.config_set("port", new)
    assert listening(new) and not listening(s.port)
    c2 = redis.Redis(port=new, decode_responses=True)
    assert c2.config_get("port")["port"] == str(new)
    # a port in use is refused, and the server keeps listening where it was
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    try:
        with pytest.raises(redis.ResponseError, match="Unable to listen on this port"):
            c2.config_set("port", busy.getsockname()[1])
    finally:
        busy.close()
    assert c2.config_get("port")["port"] == str(new) and listening(new)
    # bind: the same addresses again are a no-op, new ones listen anew
    bind = c2.config_get("bind")["bind"]
    assert c2.config_set("bind", bind) and c2.ping()
    assert c2.config_set("bind", "127.0.0.1")
    assert c2.config_get("bind")["bind"] == "127.0.0.1" and listening(new)
    c2.config_set("port", s.port)  # so that the fixture's stop finds it
    assert listening(s.port)


@BOTH
def test_config_rewrite_force_all_reads_back(start_server, binary):
    s = start_server(config_text="save 900 1\n", binary=binary,
                     args=["--enable-debug-command", "yes"] if binary == REDIS_SERVER else [])
    c = s.client()
    c.config_set("maxmemory-policy", "allkeys-lru")
    before = c.config_get("*")
    assert c.execute_command("DEBUG", "CONFIG-REWRITE-FORCE-ALL") == "OK"
    with open(os.path.join(s.dir, "test.conf")) as f:
        text = f.read()
    assert "\nhz 10\n" in text  # a default, written because forced
    # the rewritten file starts a server with the same configuration (its
    # own port, directory and files come from the command line)
    after = start_server(config_text=text, binary=binary).client().config_get("*")
    own = ("port", "dir", "pidfile", "logfile", "unixsocket", "enable-debug-command")
    assert {k: v for k, v in after.items() if k not in own} == {k: v for k, v in before.items() if k not in own}


@BOTH
def test_hidden_knobs_answer_by_exact_name_only(start_server, binary):
    c = start_server(binary=binary).client()
    assert "key-load-delay" not in c.config_get("*")
    assert c.config_get("key-load-delay") == {"key-load-delay": "0"}
    assert c.config_set("key-load-delay", 10)


def test_client_list_qbuf_counts_the_running_request(server, redis_ref):
    for s in (server, redis_ref):
        c = s.client()
        line = c.execute_command("CLIENT", "INFO")
        assert " qbuf=26 " in line, line  # *2\r\n$6\r\nCLIENT\r\n$4\r\nINFO\r\n
