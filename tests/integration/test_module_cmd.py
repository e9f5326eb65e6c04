"""MODULE and enable-module-command against Debian's redis-server 7.0.15.

redis-like has no module API: MODULE LIST must be the empty list Redis
gives with no module loaded, and LOAD / LOADEX / UNLOAD the errors Redis
gives for a library it cannot load and a module it does not have, behind
the same enable-module-command guard.  A config file's loadmodule line
stops our start-up with the line (Redis stops too: no such library)."""
import subprocess

import pytest
import redis

from conftest import REDIS_SERVER, SERVER
from rawresp import RawConn
from compat74 import as74  # 7.4's changed texts on 7.0's replies

pytestmark = pytest.mark.differential

# what each server answers, as text (errors as "ERR ..." strings)
CALLS = [
    ("MODULE", "LIST"),
    ("MODULE", "HELP"),
    ("MODULE", "LOAD", "/nonexistent/mod.so"),
    ("MODULE", "LOAD", "/nonexistent/mod.so", "a", "b"),
    ("MODULE", "LOADEX", "/nonexistent/mod.so", "CONFIG", "n", "v", "ARGS", "x"),
    ("MODULE", "UNLOAD", "mymod"),
    ("MODULE", "LOAD"),
    ("MODULE", "UNLOAD"),
    ("MODULE", "LIST", "extra"),
    ("MODULE", "BOGUS"),
    ("MODULE",),
    ("CONFIG", "GET", "enable-module-command"),
    ("CONFIG", "SET", "enable-module-command", "yes"),
]


def answers(port):
    c = redis.Redis(host="127.0.0.1", port=port, decode_responses=True)
    out = []
    for call in CALLS:
        try:
            out.append(c.execute_command(*call))
        except redis.ResponseError as e:
            out.append("ERR " + str(e))
    c.close()
    return out


@pytest.mark.parametrize("mode", [None, "no", "yes", "local"])
def test_module_command_as_redis(start_server, mode):
    args = [] if mode is None else ["--enable-module-command", mode]
    ours = answers(start_server(args).port)
    ref = answers(start_server(args, binary=REDIS_SERVER).port)
    assert ours == as74(ref)
    assert ours[0] == []
    guarded = "MODULE command not allowed" in ours[2]
    assert guarded == (mode in (None, "no"))
    if not guarded:
        assert ours[2] == "ERR Error loading the extension. Please check the server logs."
        assert ours[5] == "ERR Error unloading module: no such module with that name"


def test_failed_load_says_why_in_the_log(start_server):
    s = start_server(["--enable-module-command", "yes"])
    with pytest.raises(redis.ResponseError):
        s.client().execute_command("MODULE", "LOAD", "/nonexistent/mod.so")
    assert "Module /nonexistent/mod.so failed to load: redis-like has no module API" in s.read_log()


def test_module_list_over_resp3(start_server):
    """The bytes of MODULE LIST and MODULE HELP after HELLO 3: the same on
    both (an empty array; HELP's lines as simple strings)."""
    outs = []
    for binary in (SERVER, REDIS_SERVER):
        conn = RawConn(start_server(binary=binary).port)
        conn.call("HELLO", "3")
        row = []
        for sub in ("LIST", "HELP"):
            conn.send("MODULE", sub)
            row.append(conn.read_exact()[0])
        outs.append(row)
        conn.close()
    assert outs[0] == as74(outs[1])
    assert outs[0][0] == b"*0\r\n"


def test_loadmodule_line_stops_start_up(tmp_path):
    conf = tmp_path / "redis.conf"
    conf.write_text("port 0\nloadmodule /nonexistent/mod.so\n")
    out = subprocess.run([SERVER, str(conf)], capture_output=True, text=True, timeout=10)
    text = out.stdout + out.stderr
    assert out.returncode == 1
    assert "at line 2" in text and ">>> 'loadmodule /nonexistent/mod.so'" in text
    assert "redis-like cannot load Redis modules" in text
