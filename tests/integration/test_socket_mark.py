"""socket-mark-id against Debian's redis-server 7.0.15: the firewall mark
(SO_MARK) of every TCP listening socket, read from the server process's
own sockets; 0 (the default) leaves them unmarked; immutable.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_socket_mark.py"""
import socket

import pytest
import redis

from conftest import REDIS_SERVER, SERVER, sockets_of

pytestmark = pytest.mark.differential

BINARIES = [SERVER, REDIS_SERVER]
IDS = ["ours", "redis"]


def listener_marks(pid):
    marks = []
    for s in sockets_of(pid):
        with s:
            if s.family in (socket.AF_INET, socket.AF_INET6) and s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
                marks.append(s.getsockopt(socket.SOL_SOCKET, socket.SO_MARK))
    return marks


@pytest.mark.parametrize("binary", BINARIES, ids=IDS)
@pytest.mark.parametrize("mark", [0, 123, 4294967295])
def test_listening_sockets_marked(start_server, binary, mark):
    s = start_server(["--socket-mark-id", str(mark)], binary=binary)
    c = s.client()
    assert c.config_get("socket-mark-id") == {"socket-mark-id": str(mark)}
    marks = listener_marks(s.proc.pid)
    assert marks and all((m & 0xFFFFFFFF) == mark for m in marks), marks     # getsockopt reads it signed
    with pytest.raises(redis.ResponseError, match="can't set immutable config"):
        c.config_set("socket-mark-id", "1")
