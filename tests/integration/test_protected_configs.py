"""enable-protected-configs against Debian's redis-server 7.0.15: dir and
dbfilename (a client that can set both can write the RDB file anywhere)
are refused by CONFIG SET unless the setting is yes, or local for a
loopback client; a refused call changes none of its parameters; the
setting itself is immutable (the command line sets it here, and dir, as
every test server's).

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_protected_configs.py"""
import pytest

from conftest import REDIS_SERVER
from rawresp import ExactConn

pytestmark = pytest.mark.differential

BINARIES = ["ours", REDIS_SERVER]


def start(start_server, binary, *args):
    return start_server(list(args)) if binary == "ours" else start_server(list(args), binary=binary)


@pytest.mark.parametrize("binary", BINARIES)
def test_refused_by_default(start_server, binary, tmp_path):
    s = start(start_server, binary)
    c = ExactConn(s.port)
    assert c.call("CONFIG", "GET", "enable-protected-configs")[0] == b"*2\r\n$24\r\nenable-protected-configs\r\n$2\r\nno\r\n"
    for name, value in (("dir", str(tmp_path)), ("dbfilename", "x.rdb")):
        assert c.call("CONFIG", "SET", name, value)[0] == (
            b"-ERR CONFIG SET failed (possibly related to argument '%s') - can't set protected config\r\n"
            % name.encode())
    # Nothing of a refused call is applied, whatever comes first.
    assert c.call("CONFIG", "SET", "maxmemory", "1mb", "dir", str(tmp_path))[0].startswith(b"-ERR")
    assert c.call("CONFIG", "GET", "maxmemory")[0] == b"*2\r\n$9\r\nmaxmemory\r\n$1\r\n0\r\n"
    assert c.call("CONFIG", "SET", "enable-protected-configs", "yes")[0] == (
        b"-ERR CONFIG SET failed (possibly related to argument 'enable-protected-configs')"
        b" - can't set immutable config\r\n")
    c.close()
    assert s.client().config_get("dir")["dir"] == s.dir


@pytest.mark.parametrize("binary", BINARIES)
@pytest.mark.parametrize("mode", ["yes", "local"])
def test_allowed(start_server, binary, mode, tmp_path):
    s = start(start_server, binary, "--enable-protected-configs", mode)
    c = s.client()
    assert c.config_get("enable-protected-configs") == {"enable-protected-configs": mode}
    c.config_set("dir", str(tmp_path))          # a loopback client: local lets it in
    c.config_set("dbfilename", "moved.rdb")
    c.set("k", "v")
    c.save()
    assert (tmp_path / "moved.rdb").exists()
