"""Server and connection commands (INFO, CONFIG, CLIENT, AUTH, HELLO,
SELECT, TIME, DEBUG, SHUTDOWN, COMMAND, RESET, QUIT) and the process itself:
--version, config file errors, command-line overrides, unix socket, SIGTERM."""
import os
import re
import signal
import socket
import subprocess
import time

import pytest
import redis

from conftest import SERVER, raw_request


def parse_info(text):
    out = {}
    for line in text.split("\r\n"):
        if line and not line.startswith("#"):
            k, v = line.split(":", 1)
            out[k] = v
    return out


def info_text(c, *sections):
    """INFO as the raw text a tool sees (redis-py parses it otherwise)."""
    c.connection_pool.get_connection("_").disconnect()
    conn = c.connection_pool.get_connection("INFO")
    try:
        conn.send_command("INFO", *sections)
        return conn.read_response()
    finally:
        c.connection_pool.release(conn)


def send(port, *cmds, timeout=0.5):
    payload = b"".join((cmd if isinstance(cmd, bytes) else cmd.encode()) + b"\r\n" for cmd in cmds)
    return raw_request(port, payload, timeout)


# ---------------------------------------------------------------- INFO

def test_info_format(server):
    c = server.client()
    text = info_text(c)
    assert text.endswith("\r\n")
    assert "\n" not in text.replace("\r\n", "")
    blocks = text.rstrip("\r\n").split("\r\n\r\n")
    headers = [b.split("\r\n", 1)[0] for b in blocks]
    assert headers[:5] == ["# Server", "# Clients", "# Memory", "# Persistence", "# Stats"]
    assert "# Keyspace" in headers and "# Commandstats" not in headers
    for b in blocks:
        for line in b.split("\r\n")[1:]:
            assert re.match(r"^[a-z_0-9]+:", line), line


def test_info_server_fields(server):
    c = server.client()
    info = parse_info(info_text(c, "server"))
    assert info["redis_version"] == "7.4.1"  # the Redis surface we match (issue 47)
    assert re.match(r"^\d+\.\d+\.\d+$", info["redis_like_version"])
    assert int(info["process_id"]) == server.proc.pid
    assert int(info["tcp_port"]) == server.port
    assert int(info["uptime_in_seconds"]) >= 0
    assert int(info["hz"]) == 10
    assert os.path.samefile(info["executable"], SERVER) or info["executable"].endswith("redis-like-server")
    assert "config_file" in info
    assert len(info["run_id"]) == 40


def test_info_sections_selection(server):
    c = server.client()
    only = info_text(c, "memory")
    assert only.startswith("# Memory\r\n") and "# Server" not in only
    two = info_text(c, "server", "keyspace")
    assert two.startswith("# Server\r\n") and "# Keyspace" in two and "# Memory" not in two
    assert "# Commandstats" in info_text(c, "all")
    assert "# Commandstats" in info_text(c, "commandstats")
    assert info_text(c, "nosuchsection") == ""
    assert parse_info(info_text(c, "persistence"))["loading"] == "0"


def test_info_stats_counters(r):
    before = r.info("stats")["total_commands_processed"]
    for _ in range(10):
        r.ping()
    after = r.info("stats")["total_commands_processed"]
    assert after - before == 11   # 10 PINGs and the first INFO
    st = r.info("stats")
    for k in ("instantaneous_ops_per_sec", "keyspace_hits", "keyspace_misses", "expired_keys",
              "total_connections_received", "total_net_input_bytes", "total_error_replies"):
        assert k in st, k


def test_info_clients_and_keyspace(r, server):
    other = server.client()
    other.ping()
    assert r.info("clients")["connected_clients"] >= 2
    r.set("a", 1)
    r.set("b", 1, ex=100)
    assert r.info("keyspace")["db0"] == {"keys": 2, "expires": 1, "avg_ttl": r.info("keyspace")["db0"]["avg_ttl"]}
    other.close()


def test_commandstats_and_errorstats(r):
    r.config_resetstat()
    r.set("k", "v")
    r.get("k")
    r.get("k")
    with pytest.raises(redis.ResponseError):
        r.execute_command("INCR", "k")
    cs = r.info("commandstats")
    assert cs["cmdstat_get"]["calls"] == 2
    assert cs["cmdstat_incr"]["failed_calls"] == 1
    es = r.info("errorstats")
    assert es == {"errorstat_ERR": "count=1"}   # redis-py leaves a lone "k=v" unparsed
    assert r.info("stats")["total_error_replies"] == 1


# ---------------------------------------------------------------- CONFIG

def test_config_get_glob_and_multiple(r):
    got = r.config_get("max*")
    assert got["maxclients"] == "10000" and got["maxmemory"] == "0" and got["maxmemory-policy"] == "noeviction"
    assert all(k.startswith("max") for k in got)
    assert r.config_get("port") == {"port": str(r.connection_pool.connection_kwargs["port"])}
    both = r.execute_command("CONFIG", "GET", "hz", "timeout", "h?")
    assert both == {"hz": "10", "timeout": "0"} or both == ["hz", "10", "timeout", "0"]
    assert r.config_get("nosuchthing") == {}
    assert r.config_get("save") == {"save": ""}
    assert r.config_get("appendonly") == {"appendonly": "no"}


def test_config_set(r):
    assert r.config_set("maxmemory", "10mb") is True
    assert r.config_get("maxmemory") == {"maxmemory": str(10 * 1024 * 1024)}
    assert r.execute_command("CONFIG", "SET", "maxmemory", "0", "timeout", "0") in (True, "OK")
    assert r.config_get("maxmemory") == {"maxmemory": "0"}
    assert r.config_set("hz", 50) is True
    assert r.info("server")["hz"] == 50
    r.config_set("hz", 10)
    with pytest.raises(redis.ResponseError, match="Unknown option or number of arguments for CONFIG SET - 'nosuch'"):
        r.config_set("nosuch", "1")
    with pytest.raises(redis.ResponseError, match=r"CONFIG SET failed \(possibly related to argument 'hz'\)"):
        r.config_set("hz", "abc")
    with pytest.raises(redis.ResponseError, match="wrong number of arguments for 'config|set' command"):
        r.execute_command("CONFIG", "SET", "hz")
    with pytest.raises(redis.ResponseError, match="unknown subcommand 'NOPE'. Try CONFIG HELP."):
        r.execute_command("CONFIG", "NOPE")


def test_config_resetstat(r):
    for _ in range(5):
        r.ping()
    with pytest.raises(redis.ResponseError):
        r.execute_command("NOSUCHCMD")
    assert r.config_resetstat() is True
    st = r.info("stats")
    assert st["total_commands_processed"] <= 2
    assert st["total_error_replies"] == 0
    assert r.info("errorstats") == {}


# ---------------------------------------------------------------- CLIENT

def test_client_id_name_info(server):
    a, b = server.client(), server.client()
    ida, idb = a.client_id(), b.client_id()
    assert ida != idb and ida > 0
    assert a.client_getname() is None
    assert a.client_setname("worker-1") is True
    assert a.client_getname() == "worker-1"
    with pytest.raises(redis.ResponseError, match="Client names cannot contain spaces, newlines or special characters."):
        a.client_setname("has space")
    assert a.execute_command("CLIENT", "SETINFO", "lib-name", "mylib") in (True, "OK")
    a.execute_command("CLIENT", "SETINFO", "lib-ver", "1.2.3")
    with pytest.raises(redis.ResponseError, match="Unrecognized option 'nope'"):
        a.execute_command("CLIENT", "SETINFO", "nope", "x")
    info = a.client_info()
    assert str(info["id"]) == str(ida) and info["name"] == "worker-1"
    assert info["lib-name"] == "mylib" and info["lib-ver"].strip() == "1.2.3"
    listed = {cl["id"]: cl for cl in b.client_list()}
    assert listed[str(ida)]["name"] == "worker-1"
    assert str(idb) in listed and listed[str(idb)]["cmd"] == "client|list"
    for field in ("addr", "laddr", "fd", "age", "idle", "flags", "db", "qbuf", "omem", "tot-mem", "resp"):
        assert field in listed[str(ida)], field
    only = b.client_list(client_id=[str(ida)])
    assert [cl["id"] for cl in only] == [str(ida)]
    a.client_setname("")
    assert a.client_getname() is None
    a.close()
    b.close()


def test_client_kill(server):
    victim = socket.create_connection(("127.0.0.1", server.port))
    victim.sendall(b"CLIENT ID\r\n")
    vid = int(victim.recv(100)[1:].strip())
    c = server.client()
    assert c.client_kill_filter(_id=vid) == 1
    victim.settimeout(2)
    assert victim.recv(100) == b""
    victim.close()
    v2 = socket.create_connection(("127.0.0.1", server.port))
    v2.sendall(b"PING\r\n")
    v2.recv(100)
    addr = "127.0.0.1:%d" % v2.getsockname()[1]
    assert c.client_kill(addr) is True
    v2.settimeout(2)
    assert v2.recv(100) == b""
    v2.close()
    with pytest.raises(redis.ResponseError, match="No such client"):
        c.client_kill("1.2.3.4:5")
    assert c.client_kill_filter(_id=999999) == 0
    assert c.client_kill_filter(_id=c.client_id()) == 0, "SKIPME yes is the default"
    c.close()


# ---------------------------------------------------------------- AUTH, HELLO

def test_auth_without_password(r):
    with pytest.raises(redis.ResponseError, match="AUTH <password> called without any password configured"):
        r.execute_command("AUTH", "x")
    assert r.execute_command("AUTH", "default", "anything") in (True, "OK")


def test_requirepass(start_server):
    s = start_server(["--requirepass", "s3cret"])
    out, closed = send(s.port, "PING", "GET k", "AUTH wrong", "AUTH nobody s3cret", "AUTH s3cret", "PING")
    assert out == (b"-NOAUTH Authentication required.\r\n-NOAUTH Authentication required.\r\n"
                   b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
                   b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
                   b"+OK\r\n+PONG\r\n")
    assert not closed
    out, _ = send(s.port, "AUTH default s3cret", "PING")
    assert out == b"+OK\r\n+PONG\r\n"
    ok = s.client(password="s3cret")
    assert ok.ping()
    with pytest.raises((redis.AuthenticationError, redis.ResponseError), match="WRONGPASS"):
        s.client(password="bad").ping()


def test_unauthenticated_limits(start_server):
    s = start_server(["--requirepass", "pw"])
    out, closed = raw_request(s.port, b"*2\r\n$4\r\nAUTH\r\n$20000\r\n")
    assert out == b"-ERR Protocol error: unauthenticated bulk length\r\n" and closed
    out, closed = raw_request(s.port, b"*11\r\n")
    assert out == b"-ERR Protocol error: unauthenticated multibulk length\r\n" and closed
    # Once authenticated the normal limits apply.
    c = s.client(password="pw")
    assert c.echo("x" * 20000) == "x" * 20000


def test_hello_2_and_3(server):
    out, _ = send(server.port, "HELLO 3 SETNAME h3", "CLIENT GETNAME", "HELLO 2", "PING")
    assert out.startswith(b"%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.4.1\r\n$5\r\nproto\r\n:3\r\n")
    rest = out.split(b"$7\r\nmodules\r\n*0\r\n", 1)[1]
    assert rest.startswith(b"$2\r\nh3\r\n")
    rest = rest[len(b"$2\r\nh3\r\n"):]
    assert rest.startswith(b"*14\r\n$6\r\nserver\r\n") and b"$5\r\nproto\r\n:2\r\n" in rest
    assert rest.endswith(b"+PONG\r\n")


def test_hello_errors_keep_connection(server):
    out, closed = send(server.port, "HELLO 4", "HELLO abc", "HELLO 3 FOO", "HELLO 2 AUTH bob pw", "PING")
    assert out == (b"-NOPROTO unsupported protocol version\r\n"
                   b"-ERR Protocol version is not an integer or out of range\r\n"
                   b"-ERR Syntax error in HELLO option 'FOO'\r\n"
                   b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
                   b"+PONG\r\n")
    assert not closed


def test_hello_auth_with_requirepass(start_server):
    s = start_server(["--requirepass", "pw"])
    out, _ = send(s.port, "HELLO 3")
    assert out.startswith(b"-NOAUTH HELLO must be called with the client already authenticated")
    out, _ = send(s.port, "HELLO 2 AUTH default pw SETNAME cli", "CLIENT GETNAME")
    assert out.startswith(b"*14\r\n") and out.endswith(b"$3\r\ncli\r\n")
    out, _ = send(s.port, "HELLO 3 AUTH default nope", "PING")
    assert out == (b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
                   b"-NOAUTH Authentication required.\r\n")


# ---------------------------------------------------------------- misc commands

def test_time(r):
    sec, usec = r.time()
    assert abs(sec + usec / 1e6 - time.time()) < 2
    assert 0 <= usec < 1000000


def test_debug_object_and_sleep(r):
    r.set("k", "hello")
    text = r.execute_command("DEBUG", "OBJECT", "k")
    text = text if isinstance(text, str) else " ".join("%s:%s" % kv for kv in text.items())
    assert "refcount:1" in text and "encoding:embstr" in text
    with pytest.raises(redis.ResponseError, match="no such key"):
        r.execute_command("DEBUG", "OBJECT", "nope")
    t0 = time.time()
    assert r.execute_command("DEBUG", "SLEEP", "0.2") in (True, "OK")
    assert time.time() - t0 >= 0.19


def test_command_introspection(r):
    count = r.command_count()
    port = r.connection_pool.connection_kwargs["port"]
    out, _ = send(port, "COMMAND LIST")
    names = re.findall(rb"\$\d+\r\n([^\r]+)\r\n", out)
    # LIST names subcommands too ("config|get"), as Redis 7.0 does; COUNT
    # counts only the top-level commands.
    assert out.startswith(b"*%d\r\n" % len(names)) and count == len([n for n in names if b"|" not in n])
    assert count >= 50 and b"config|get" in names
    for n in (b"get", b"set", b"info", b"config", b"client", b"hello", b"memory", b"scan"):
        assert n in names
    out, _ = send(port, "COMMAND INFO get nosuch config|get")
    assert out.startswith(b"*3\r\n*10\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n")
    assert b"\r\n$-1\r\n*10\r\n$10\r\nconfig|get\r\n:-3\r\n" in out
    out, _ = send(port, "COMMAND DOCS get")
    assert out.startswith(b"*2\r\n$3\r\nget\r\n") and b"summary" in out and b"since" in out and b"group" in out


def test_select_reset_quit(server):
    out, closed = send(server.port, "SELECT 2", "SET rk v", "CLIENT SETNAME x", "RESET", "GET rk", "CLIENT GETNAME",
                       "SELECT 2", "GET rk", "DEL rk", "QUIT", "PING")
    assert out == b"+OK\r\n+OK\r\n+OK\r\n+RESET\r\n$-1\r\n$-1\r\n+OK\r\n$1\r\nv\r\n:1\r\n+OK\r\n"
    assert closed, "QUIT closes the connection after its reply"


def test_reset_requires_auth_again(start_server):
    s = start_server(["--requirepass", "pw"])
    out, _ = send(s.port, "AUTH pw", "PING", "RESET", "PING")
    assert out == b"+OK\r\n+PONG\r\n+RESET\r\n-NOAUTH Authentication required.\r\n"


def test_unknown_command_counts_as_error(r):
    with pytest.raises(redis.ResponseError, match="unknown command 'NOPE', with args beginning with: 'x'"):
        r.execute_command("NOPE", "x")


# ---------------------------------------------------------------- the process

def test_version_output():
    for flag in ("--version", "-v"):
        out = subprocess.run([SERVER, flag], capture_output=True, text=True, timeout=10)
        assert out.returncode == 0
        assert re.match(r"^redis-like server v=\d+\.\d+\.\d+ sha=[0-9a-f]{8}:\d malloc=\S+ bits=64 build=[0-9a-f]+ redis=\S+ io-engine=\S+\n$",
                        out.stdout), out.stdout
        assert re.search(r"malloc=(libc|jemalloc-\d|tcmalloc|tcmalloc_minimal|ebbmalloc)", out.stdout)


@pytest.mark.parametrize("conf,line,reason", [
    ("port 7000\n# comment\n\nnosuchdirective 1\n", 4, "Bad directive or wrong number of arguments"),
    ("hz 10\nport abc\n", 2, "argument couldn't be parsed into an integer"),
    ("maxmemory-policy sometimes\n", 1, ""),
    ("save 1 2 3 \"unclosed\n", 1, ""),
])
def test_config_file_errors(tmp_path, conf, line, reason):
    path = tmp_path / "bad.conf"
    path.write_text(conf)
    out = subprocess.run([SERVER, str(path), "--port", "0"], capture_output=True, text=True, timeout=10)
    assert out.returncode == 1
    text = out.stdout + out.stderr
    assert "FATAL CONFIG FILE ERROR" in text
    assert "at line %d" % line in text
    assert reason in text
    bad_line = conf.split("\n")[line - 1].strip()
    assert ">>> '%s'" % bad_line in text


def test_missing_config_file():
    out = subprocess.run([SERVER, "/nonexistent/redis-like.conf"], capture_output=True, text=True, timeout=10)
    assert out.returncode == 1
    assert "/nonexistent/redis-like.conf" in out.stdout + out.stderr


def test_command_line_overrides_config_file(start_server):
    s = start_server(["--hz", "25", "--maxclients", "123"], config_text="hz 5\nmaxclients 50\ntimeout 7\n")
    c = s.client()
    assert c.config_get("hz") == {"hz": "25"}
    assert c.config_get("maxclients") == {"maxclients": "123"}
    assert c.config_get("timeout") == {"timeout": "7"}
    info = c.info("server")
    assert info["config_file"].endswith("test.conf")


def test_unixsocket(start_server, tmp_path):
    path = str(tmp_path / "rl.sock")
    s = start_server(["--unixsocket", path, "--unixsocketperm", "700"])
    assert oct(os.stat(path).st_mode & 0o777) == "0o700"
    c = redis.Redis(unix_socket_path=path, decode_responses=True)
    assert c.ping()
    c.set("via", "unix")
    assert s.client().get("via") == "unix"
    c.close()
    s.stop()
    assert not os.path.exists(path), "the socket file is removed at shutdown"


def test_sigterm_clean_exit(start_server):
    s = start_server()
    s.client().set("k", "v")
    s.proc.send_signal(signal.SIGTERM)
    assert s.proc.wait(timeout=10) == 0
    assert "shutdown" in s.read_log().lower() or "bye" in s.read_log().lower()


def test_shutdown_command(start_server):
    s = start_server()
    c = s.client()
    with pytest.raises(redis.ResponseError, match="syntax error"):
        c.execute_command("SHUTDOWN", "BOGUS")
    c.shutdown(nosave=True)   # redis-py swallows the expected disconnect
    assert s.proc.wait(timeout=10) == 0
    assert "User requested shutdown" in s.read_log()
