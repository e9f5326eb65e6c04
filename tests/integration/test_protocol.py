"""The wire protocol over raw sockets: pipelining, inline commands, every
malformed-request error and the limits, checked byte for byte."""
import socket

import pytest

from conftest import raw_request


def test_pipeline_answered_in_order(server):
    payload = b"".join(b"*3\r\n$3\r\nSET\r\n$3\r\nk%02d\r\n$1\r\n%d\r\n" % (i, i % 10) for i in range(100))
    payload += b"".join(b"*2\r\n$3\r\nGET\r\n$3\r\nk%02d\r\n" % i for i in range(100))
    with socket.create_connection(("127.0.0.1", server.port)) as s:
        s.sendall(payload)
        want = b"+OK\r\n" * 100 + b"".join(b"$1\r\n%d\r\n" % (i % 10) for i in range(100))
        got = b""
        while len(got) < len(want):
            chunk = s.recv(65536)
            assert chunk
            got += chunk
    assert got == want


def test_request_split_across_reads(server):
    with socket.create_connection(("127.0.0.1", server.port)) as s:
        for piece in [b"*3\r\n$3\r\nSE", b"T\r\n$3\r\nabc\r", b"\n$5\r\nhel", b"lo\r\n"]:
            s.sendall(piece)
        assert s.recv(100) == b"+OK\r\n"
        s.sendall(b"GET abc\r\n")
        assert s.recv(100) == b"$5\r\nhello\r\n"


def test_inline_commands_and_quotes(server):
    out, _ = raw_request(server.port, b'SET q "a b\\x41"\r\nGET q\r\nPING\r\n\r\nECHO \'it\\\'s\'\r\n', 0.5)
    assert out == b"+OK\r\n$4\r\na bA\r\n+PONG\r\n$4\r\nit's\r\n"


@pytest.mark.parametrize("payload,error", [
    (b"*1\r\n$x\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*abc\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    (b"*1\r\nfoo\r\n", b"-ERR Protocol error: expected '$', got 'f'\r\n"),
    (b"*1\r\n$-5\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*3000000000\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    (b'SET a "unbalanced\r\n', b"-ERR Protocol error: unbalanced quotes in request\r\n"),
    (b"*1\r\n$600000000\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
])
def test_protocol_errors_close_connection(server, payload, error):
    out, closed = raw_request(server.port, payload)
    assert out == error
    assert closed, "the server must close the connection after a protocol error"
    # The server is unharmed.
    assert server.client().ping()


def test_too_big_inline_request(server):
    out, closed = raw_request(server.port, b"A" * (70 * 1024))
    assert out == b"-ERR Protocol error: too big inline request\r\n"
    assert closed


def test_too_big_bulk_count_string(server):
    out, closed = raw_request(server.port, b"*1\r\n$" + b"1" * (70 * 1024))
    assert out == b"-ERR Protocol error: too big bulk count string\r\n"
    assert closed


def test_proto_max_bulk_len_is_configurable(start_server):
    s = start_server(["--proto-max-bulk-len", "1mb"])
    out, closed = raw_request(s.port, b"*2\r\n$4\r\nECHO\r\n$2000000\r\n")
    assert out == b"-ERR Protocol error: invalid bulk length\r\n"
    assert closed
    c = s.client()
    assert c.echo("x" * 1000000) == "x" * 1000000


def test_empty_multibulk_is_ignored(server):
    out, _ = raw_request(server.port, b"*0\r\n*-1\r\nPING\r\n", 0.5)
    assert out == b"+PONG\r\n"


def test_unknown_command_and_arity_texts(server):
    out, closed = raw_request(server.port, b"FOO a b\r\nGET\r\nPING\r\n", 0.5)
    assert out == (b"-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n"
                   b"-ERR wrong number of arguments for 'get' command\r\n+PONG\r\n")
    assert not closed


def test_unknown_subcommand_keeps_connection(server):
    out, closed = raw_request(server.port, b"CONFIG FOO\r\nCLIENT\r\nPING\r\n", 0.5)
    assert out == (b"-ERR unknown subcommand 'FOO'. Try CONFIG HELP.\r\n"
                   b"-ERR wrong number of arguments for 'client' command\r\n+PONG\r\n")
    assert not closed


def test_query_buffer_limit_closes_client(start_server):
    s = start_server(["--client-query-buffer-limit", "1mb"])
    # A bulk that is announced as 4 MB (allowed by proto-max-bulk-len) but
    # whose bytes overflow the 1 MB query buffer limit.
    with socket.create_connection(("127.0.0.1", s.port)) as sock:
        sock.sendall(b"*2\r\n$4\r\nECHO\r\n$4000000\r\n")
        closed = False
        try:
            for _ in range(100):
                sock.sendall(b"x" * 65536)
        except (BrokenPipeError, ConnectionResetError):
            closed = True
        if not closed:
            sock.settimeout(5)
            try:
                closed = sock.recv(100) == b""
            except ConnectionResetError:
                closed = True
    assert closed
    assert s.client().ping()
    assert "max query buffer" in s.read_log()


def test_maxclients(start_server):
    s = start_server(["--maxclients", "2"])
    a = socket.create_connection(("127.0.0.1", s.port))
    b = socket.create_connection(("127.0.0.1", s.port))
    a.sendall(b"PING\r\n")
    b.sendall(b"PING\r\n")
    assert a.recv(100) == b"+PONG\r\n" and b.recv(100) == b"+PONG\r\n"
    # Send nothing: the server answers at accept time and closes.
    out, closed = raw_request(s.port, b"")
    assert out == b"-ERR max number of clients reached\r\n"
    assert closed
    a.close()
    b.close()


def test_maxclients_slot_is_free_once_the_client_hung_up(start_server):
    # A client that closed before the next one connected no longer counts.
    # On io_uring its hang-up is a completion the kernel may still hold
    # when the listener's event runs: before accept settled those first,
    # about 1 round in 200 had a newcomer refused.
    s = start_server(["--maxclients", "2"])

    def pong(sock):
        sock.sendall(b"PING\r\n")
        return sock.recv(100) == b"+PONG\r\n"

    refused = 0
    for _ in range(400):
        with socket.create_connection(("127.0.0.1", s.port)) as alone:
            refused += not pong(alone)
        with socket.create_connection(("127.0.0.1", s.port)) as a, \
                socket.create_connection(("127.0.0.1", s.port)) as b:
            refused += (not pong(a)) + (not pong(b))
    assert refused == 0


def test_idle_timeout(start_server):
    s = start_server(["--timeout", "1"])
    with socket.create_connection(("127.0.0.1", s.port), timeout=5) as sock:
        sock.sendall(b"PING\r\n")
        assert sock.recv(100) == b"+PONG\r\n"
        assert sock.recv(100) == b"", "an idle client is closed after 'timeout' seconds"


def test_large_value_roundtrip(server):
    c = server.client(decode_responses=False)
    blob = bytes(range(256)) * 40000
    c.set("big", blob)
    assert c.get("big") == blob
    assert c.strlen("big") == len(blob)
