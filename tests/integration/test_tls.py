"""TLS (issue 46): the tls-* settings, clients on the tls-port on both
socket engines, client certificates, reloading certificates with CONFIG
SET, refusing a bad file, bad input on the TLS port, and a comparison with
Debian's redis-server 7.0.15 started with the same TLS settings.

Certificates are made by the test in a temporary directory with the
openssl command line (a CA, a server pair, a second server pair for the
reload, a client pair, and a pair from another CA that nothing trusts).

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_tls.py"""
import json
import os
import socket
import ssl
import subprocess
import time

import pytest
import redis

from conftest import REDIS_SERVER, closed_by_server, free_port
from repl_helpers import wait_for, wait_link_up

ENGINES = ["epoll", "io_uring"]


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_pair(d, name, ca, cn, days="365"):
    """name.key and name.crt signed by ca (ca.crt/ca.key in d), valid for
    localhost and 127.0.0.1."""
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("genrsa", "-out", name + ".key", "2048", cwd=d)
    openssl("req", "-new", "-sha256", "-subj", "/O=redis-like test/CN=" + cn, "-key", name + ".key",
            "-out", name + ".csr", cwd=d)
    openssl("x509", "-req", "-sha256", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key",
            "-CAcreateserial", "-days", days, "-extfile", "san.ext", "-out", name + ".crt", cwd=d)


def make_ca(d, name, cn):
    openssl("genrsa", "-out", name + ".key", "2048", cwd=d)
    openssl("req", "-x509", "-new", "-nodes", "-sha256", "-key", name + ".key", "-days", "3650",
            "-subj", "/O=redis-like test/CN=" + cn, "-out", name + ".crt", cwd=d)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("tls"))
    make_ca(d, "ca", "Test CA")
    make_pair(d, "server", "ca", "server one")
    make_pair(d, "server2", "ca", "server two")
    make_pair(d, "client", "ca", "client")
    make_ca(d, "otherca", "Other CA")
    make_pair(d, "stranger", "otherca", "stranger")
    make_pair(d, "expired", "ca", "expired", days="-1")  # its validity ended a day ago
    return {n: os.path.join(d, n) for n in ("ca.crt", "server.crt", "server.key", "server2.crt", "server2.key",
                                           "client.crt", "client.key", "stranger.crt", "stranger.key",
                                           "expired.crt", "expired.key")}


def tls_args(certs, tls_port, auth="yes", extra=()):
    return ("--tls-port", str(tls_port), "--tls-cert-file", certs["server.crt"], "--tls-key-file",
            certs["server.key"], "--tls-ca-cert-file", certs["ca.crt"], "--tls-auth-clients", auth, *extra)


def tls_client(certs, port, cert="client", **kw):
    """redis-py over TLS; cert None: no client certificate."""
    if cert:
        kw.update(ssl_certfile=certs[cert + ".crt"], ssl_keyfile=certs[cert + ".key"])
    return redis.Redis(host="127.0.0.1", port=port, ssl=True, ssl_ca_certs=certs["ca.crt"],
                       ssl_cert_reqs="required", decode_responses=True, socket_timeout=10, **kw)


def start_tls(start_server, certs, engine="epoll", auth="yes", extra=(), binary=None):
    tport = free_port()
    kw = {} if binary is None else {"binary": binary}
    args = tls_args(certs, tport, auth, extra)
    if binary is None:
        args = ("--io-engine", engine) + args
    s = start_server(args=args, **kw)
    s.tls_port = tport
    return s


def peer_der(port, certs):
    """The DER certificate the server shows on a new connection."""
    ctx = ssl.create_default_context(cafile=certs["ca.crt"])
    ctx.load_cert_chain(certs["client.crt"], certs["client.key"])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            return s.getpeercert(binary_form=True)


def file_der(path):
    with open(path) as f:
        return ssl.PEM_cert_to_DER_cert(f.read())


@pytest.mark.parametrize("engine", ENGINES)
def test_commands_over_tls_on_both_engines(start_server, certs, engine):
    s = start_tls(start_server, certs, engine)
    assert s.client().info("server")["io_engine"] == engine
    c = tls_client(certs, s.tls_port)
    assert c.ping()
    assert c.set("k", "v") and c.get("k") == "v"
    # a value of many TLS records each way, and a pipeline of replies
    big = "x" * (3 * 1024 * 1024 + 17)
    c.set("big", big)
    assert c.get("big") == big
    p = c.pipeline(transaction=False)
    for i in range(2000):
        p.set("p%d" % i, i)
        p.get("p%d" % i)
    out = p.execute()
    assert out[1::2] == [str(i) for i in range(2000)]
    # the plain port still serves, and sees what TLS clients wrote
    assert s.client().get("k") == "v"
    st = s.client().info("stats")
    assert st["tls_connected_clients"] == 1
    assert st["tls_total_handshakes"] >= 1
    assert st["tls_total_handshake_failures"] == 0
    c.connection_pool.disconnect()
    wait_for(lambda: s.client().info("stats")["tls_connected_clients"] == 0, what="TLS client counted gone")


@pytest.mark.parametrize("engine", ENGINES)
def test_tls_accepts_per_cycle(start_server, certs, engine):
    """max-new-tls-connections-per-cycle (Redis 7.4; default 1): one TLS
    connection accepted per loop round, the plain port keeping its own
    limit; a burst of TLS clients still all get served."""
    from test_config_74 import rounds_to_accept
    s = start_tls(start_server, certs, engine, extra=("--max-new-connections-per-cycle", "1000"))
    assert s.client().config_get("max-new-tls-connections-per-cycle") == {"max-new-tls-connections-per-cycle": "1"}
    taken, socks = rounds_to_accept(s, 40, s.tls_port)
    assert taken >= 40, taken
    for so in socks:
        so.close()
    taken, socks = rounds_to_accept(s, 40)            # plain connections: 1000 a round
    assert taken < 20, taken
    for so in socks:
        so.close()
    s.client().config_set("max-new-tls-connections-per-cycle", 1000)
    taken, socks = rounds_to_accept(s, 40, s.tls_port)
    assert taken < 20, taken
    for so in socks:
        so.close()
    s.client().config_set("max-new-tls-connections-per-cycle", 1)
    clients = [tls_client(certs, s.tls_port) for _ in range(30)]
    assert all(c.ping() for c in clients)


@pytest.mark.parametrize("engine", ENGINES)
def test_client_certificates_yes_optional_no(start_server, certs, engine):
    yes = start_tls(start_server, certs, engine, "yes")
    assert tls_client(certs, yes.tls_port).ping()
    with pytest.raises(redis.exceptions.ConnectionError):
        tls_client(certs, yes.tls_port, cert=None).ping()
    with pytest.raises(redis.exceptions.ConnectionError):
        tls_client(certs, yes.tls_port, cert="stranger").ping()
    with pytest.raises(redis.exceptions.ConnectionError):
        tls_client(certs, yes.tls_port, cert="expired").ping()
    assert yes.client().info("stats")["tls_total_handshake_failures"] >= 3  # redis-py may try twice
    assert tls_client(certs, yes.tls_port).ping()  # failures cost only themselves

    opt = start_tls(start_server, certs, engine, "optional")
    assert tls_client(certs, opt.tls_port, cert=None).ping()
    assert tls_client(certs, opt.tls_port).ping()
    with pytest.raises(redis.exceptions.ConnectionError):  # a certificate shown must be good
        tls_client(certs, opt.tls_port, cert="stranger").ping()

    no = start_tls(start_server, certs, engine, "no")
    assert tls_client(certs, no.tls_port, cert=None).ping()
    assert tls_client(certs, no.tls_port, cert="stranger").ping()  # not asked for, not checked


def test_server_refuses_untrusted_server_cert_on_client_side(start_server, certs):
    """A client trusting only the other CA refuses our server (the
    certificate is what was configured)."""
    s = start_tls(start_server, certs)
    c = redis.Redis(host="127.0.0.1", port=s.tls_port, ssl=True, ssl_ca_certs=certs["stranger.crt"],
                    ssl_cert_reqs="required", ssl_certfile=certs["client.crt"], ssl_keyfile=certs["client.key"])
    with pytest.raises(redis.exceptions.ConnectionError):
        c.ping()
    assert peer_der(s.tls_port, certs) == file_der(certs["server.crt"])


@pytest.mark.parametrize("engine", ENGINES)
def test_redis_cli_tls(start_server, certs, engine):
    s = start_tls(start_server, certs, engine)
    cli = ["redis-cli", "-p", str(s.tls_port), "--tls", "--cacert", certs["ca.crt"], "--cert", certs["client.crt"],
           "--key", certs["client.key"]]
    out = subprocess.run(cli + ["SET", "cli", "hello"], capture_output=True, text=True, timeout=10)
    assert out.stdout.strip() == "OK", out
    out = subprocess.run(cli + ["GET", "cli"], capture_output=True, text=True, timeout=10)
    assert out.stdout.strip() == "hello"
    # without a client certificate under tls-auth-clients yes: refused
    out = subprocess.run(cli[:6] + ["PING"], capture_output=True, text=True, timeout=10)
    assert "PONG" not in out.stdout


@pytest.mark.parametrize("engine", ENGINES)
def test_cert_reload_keeps_clients(start_server, certs, engine):
    s = start_tls(start_server, certs, engine)
    old = tls_client(certs, s.tls_port)
    old.set("before", "1")
    assert peer_der(s.tls_port, certs) == file_der(certs["server.crt"])
    # certificate and key change together, in one CONFIG SET (as with Redis)
    assert old.execute_command("CONFIG", "SET", "tls-cert-file", certs["server2.crt"], "tls-key-file",
                               certs["server2.key"])
    # the connected client goes on over its session; new ones get the new certificate
    assert old.get("before") == "1"
    assert old.set("after", "2")
    assert peer_der(s.tls_port, certs) == file_der(certs["server2.crt"])
    assert tls_client(certs, s.tls_port).get("after") == "2"
    assert old.config_get("tls-cert-file") == {"tls-cert-file": certs["server2.crt"]}


def test_bad_file_refused_old_context_kept(start_server, certs):
    s = start_tls(start_server, certs)
    c = tls_client(certs, s.tls_port)
    with pytest.raises(redis.exceptions.ResponseError, match="Unable to update TLS configuration"):
        c.config_set("tls-cert-file", "/nonexistent/cert.pem")
    assert c.config_get("tls-cert-file") == {"tls-cert-file": certs["server.crt"]}
    # a key that does not match the certificate is refused too
    with pytest.raises(redis.exceptions.ResponseError, match="Unable to update TLS configuration"):
        c.config_set("tls-key-file", certs["client.key"])
    with pytest.raises(redis.exceptions.ResponseError):
        c.config_set("tls-protocols", "TLSv9")
    assert c.ping()
    assert tls_client(certs, s.tls_port).ping()
    assert peer_der(s.tls_port, certs) == file_der(certs["server.crt"])


@pytest.mark.parametrize("engine", ENGINES)
def test_garbage_and_plain_text_on_tls_port(start_server, certs, engine):
    s = start_tls(start_server, certs, engine)
    # plain RESP on the TLS port: refused and closed
    with socket.create_connection(("127.0.0.1", s.tls_port), timeout=5) as raw:
        raw.sendall(b"PING\r\n")
        assert closed_by_server(raw)
    # random bytes
    with socket.create_connection(("127.0.0.1", s.tls_port), timeout=5) as raw:
        raw.sendall(os.urandom(5000))
        assert closed_by_server(raw)
    # a TLS record header announcing a handshake, then junk
    with socket.create_connection(("127.0.0.1", s.tls_port), timeout=5) as raw:
        raw.sendall(b"\x16\x03\x01\x00\x20" + b"\xff" * 32)
        assert closed_by_server(raw)
    # garbage after a completed handshake
    ctx = ssl.create_default_context(cafile=certs["ca.crt"])
    ctx.load_cert_chain(certs["client.crt"], certs["client.key"])
    raw = socket.create_connection(("127.0.0.1", s.tls_port), timeout=5)
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname="localhost")
    while True:
        try:
            obj.do_handshake()
            break
        except ssl.SSLWantReadError:
            raw.sendall(out.read())
            inc.write(raw.recv(65536))
    raw.sendall(out.read())
    obj.write(b"PING\r\n")
    raw.sendall(out.read())
    raw.sendall(b"\x17\x03\x03\x00\x40" + os.urandom(64))  # an application record that does not decrypt
    assert closed_by_server(raw)
    raw.close()
    # a peer that closes mid-record
    with socket.create_connection(("127.0.0.1", s.tls_port), timeout=5) as raw:
        raw.sendall(b"\x16\x03\x01\x02\x00\x01")
    st = s.client().info("stats")
    assert st["tls_total_handshake_failures"] >= 3
    assert tls_client(certs, s.tls_port).ping()
    assert s.client().ping()


def test_silent_handshake_does_not_stall_others(start_server, certs):
    s = start_tls(start_server, certs, "io_uring")
    silent = [socket.create_connection(("127.0.0.1", s.tls_port), timeout=5) for _ in range(20)]
    half = socket.create_connection(("127.0.0.1", s.tls_port), timeout=5)
    half.sendall(b"\x16\x03\x01")  # a record header cut short
    t0 = time.monotonic()
    c = tls_client(certs, s.tls_port)
    for i in range(100):
        c.set("k%d" % i, i)
    assert time.monotonic() - t0 < 5
    for x in silent + [half]:
        x.close()


@pytest.mark.slow
def test_handshake_timeout_closes(start_server, certs):
    s = start_tls(start_server, certs)
    raw = socket.create_connection(("127.0.0.1", s.tls_port), timeout=5)
    assert closed_by_server(raw, timeout=15)
    raw.close()
    assert s.client().info("stats")["tls_total_handshake_failures"] == 1


def test_tls_only_with_port_zero(certs, tmp_path):
    import benchlib
    from conftest import SERVER
    tport = free_port()
    srv = benchlib.Server(SERVER, ["--port", "0", *tls_args(certs, tport)], wait=None, prefix="rl-test-")
    try:
        wait_for(lambda: _pings(certs, tport), timeout=10, what="TLS-only server up")
        c = tls_client(certs, tport)
        assert c.config_get("port") == {"port": "0"}
        assert c.config_get("tls-port") == {"tls-port": str(tport)}
    finally:
        srv.remove()


def _pings(certs, port):
    try:
        return tls_client(certs, port).ping()
    except redis.exceptions.ConnectionError:
        return False


def test_config_set_tls_port_listens(start_server, certs):
    s = start_server(args=("--tls-cert-file", certs["server.crt"], "--tls-key-file", certs["server.key"],
                           "--tls-ca-cert-file", certs["ca.crt"]))
    c = s.client()
    assert c.info("stats").get("tls_total_handshakes") is None  # not configured until asked for
    tport = free_port()
    assert c.config_set("tls-port", tport)
    assert tls_client(certs, tport).ping()
    assert c.config_set("tls-port", 0)
    with pytest.raises(redis.exceptions.ConnectionError):
        tls_client(certs, tport).ping()


def test_config_rewrite_keeps_tls_settings(start_server, certs):
    tport = free_port()
    conf = "".join("%s %s\n" % (k, v) for k, v in (
        ("tls-port", tport), ("tls-cert-file", certs["server.crt"]), ("tls-key-file", certs["server.key"]),
        ("tls-ca-cert-file", certs["ca.crt"]), ("tls-auth-clients", "optional")))
    s = start_server(config_text=conf)
    c = s.client()
    c.config_set("tls-session-cache-timeout", "120")
    c.config_set("tls-protocols", "TLSv1.2 TLSv1.3")
    c.config_rewrite()
    text = open(os.path.join(s.dir, "test.conf")).read()
    assert "tls-session-cache-timeout 120" in text
    assert 'tls-protocols "TLSv1.2 TLSv1.3"' in text or "tls-protocols TLSv1.2 TLSv1.3" in text
    assert "tls-auth-clients optional" in text
    assert tls_client(certs, tport, cert=None).ping()


@pytest.mark.differential
def test_config_get_and_errors_match_redis(start_server, certs):
    extra = ("--tls-session-cache-size", "1000", "--tls-ciphersuites", "TLS_AES_256_GCM_SHA384",
             "--tls-protocols", "TLSv1.2 TLSv1.3", "--tls-prefer-server-ciphers", "yes")
    ours = start_tls(start_server, certs, extra=extra)
    ref = start_tls(start_server, certs, extra=extra, binary=REDIS_SERVER)
    mine = tls_client(certs, ours.tls_port).config_get("tls-*")
    theirs = tls_client(certs, ref.tls_port).config_get("tls-*")
    assert set(mine) == set(theirs)
    for k in mine:
        if k != "tls-port":
            assert mine[k] == theirs[k], k
    for name, value in (("tls-cert-file", "/nonexistent.pem"), ("tls-auth-clients", "maybe"),
                        ("tls-session-cache-size", "-1"), ("tls-protocols", "TLSv9")):
        errs = []
        for srv in (ours, ref):
            try:
                tls_client(certs, srv.tls_port).config_set(name, value)
                errs.append(None)
            except redis.exceptions.ResponseError as e:
                errs.append(str(e).split(" - ")[0])
        assert errs[0] == errs[1], (name, errs)
        assert errs[0] is not None, name
    # both still serve with the old context
    for srv in (ours, ref):
        assert tls_client(certs, srv.tls_port).ping()


# ---------------------------------------------------------------- replication

def repl_pair(start_server, certs, master_binary, replica_binary, engine="epoll"):
    """A TLS master and a TLS replica of it (tls-replication yes on both,
    the replica linked to the master's tls-port)."""
    extra = ("--tls-replication", "yes", "--repl-diskless-sync-delay", "0")
    master = start_tls(start_server, certs, engine, extra=extra,
                       binary=None if master_binary == "ours" else REDIS_SERVER)
    replica = start_tls(start_server, certs, engine, extra=extra,
                        binary=None if replica_binary == "ours" else REDIS_SERVER)
    return master, replica


def fill(c, prefix, n):
    p = c.pipeline(transaction=False)
    for i in range(n):
        p.set("%s:%d" % (prefix, i), "v" * (i % 700) + str(i))
        p.rpush("%s:list" % prefix, i)
    p.execute()


@pytest.mark.parametrize("master_binary,replica_binary,engine", [
    ("redis", "ours", "epoll"), ("redis", "ours", "io_uring"), ("ours", "redis", "epoll"),
    ("ours", "redis", "io_uring")])
def test_replication_over_tls_with_redis(start_server, certs, master_binary, replica_binary, engine):
    master, replica = repl_pair(start_server, certs, master_binary, replica_binary, engine)
    m, r = master.client(), replica.client()
    fill(m, "before", 3000)  # in the full sync's RDB (several MB of records)
    r.replicaof("127.0.0.1", master.tls_port)
    wait_link_up(r)
    fill(m, "after", 500)  # the stream
    wait_for(lambda: m.info("replication")["master_repl_offset"] ==
             r.info("replication").get("slave_repl_offset"), what="replica caught up")
    assert r.dbsize() == m.dbsize() == 3502
    assert r.get("before:2999") == m.get("before:2999")
    assert r.lrange("after:list", 0, -1) == [str(i) for i in range(500)]
    # the link is TLS: the master counts a TLS client (ours in INFO, Redis through CLIENT LIST's port)
    if master_binary == "ours":
        assert m.info("stats")["tls_connected_clients"] == 1
    else:
        assert r.info("stats")["tls_connected_clients"] == 1  # our master client took over the session
    # partial resync after the link drops
    full_before = m.info("stats")["sync_full"]
    r.execute_command("CLIENT", "KILL", "TYPE", "master")
    m.set("during", "x")
    wait_link_up(r)
    wait_for(lambda: r.get("during") == "x", what="stream after the partial resync")
    assert m.info("stats")["sync_partial_ok"] >= 1
    assert m.info("stats")["sync_full"] == full_before


@pytest.mark.parametrize("load", ["swapdb", "on-empty-db"])
def test_diskless_load_over_tls(start_server, certs, load):
    """Our replica loads a TLS master's RDB from the socket as it arrives
    (repl-diskless-load), through the session."""
    master, replica = repl_pair(start_server, certs, "redis", "ours")
    m, r = master.client(), replica.client()
    fill(m, "k", 4000)
    r.config_set("repl-diskless-load", load)
    r.set("old", "1")  # swapdb replaces it; on-empty-db then loads from the file
    r.replicaof("127.0.0.1", master.tls_port)
    wait_link_up(r)
    assert r.dbsize() == m.dbsize() == 4001
    assert r.get("k:3999") == m.get("k:3999")
    log = replica.read_log()
    assert ("Loading DB in memory" in log) and (("to parser" in log) == (load == "swapdb"))
    m.set("after", "x")
    wait_for(lambda: r.get("after") == "x", what="the stream after a diskless load")


def test_tls_replication_with_wrong_ca_fails_cleanly(start_server, certs):
    """Our replica of a master whose certificate it does not trust: the
    handshake fails, the link stays down, the server serves on."""
    master = start_tls(start_server, certs, extra=("--tls-replication", "yes"), binary=REDIS_SERVER)
    replica = start_server(args=("--tls-replication", "yes", "--tls-cert-file", certs["server.crt"],
                                 "--tls-key-file", certs["server.key"], "--tls-ca-cert-file", certs["stranger.crt"]))
    r = replica.client()
    r.replicaof("127.0.0.1", master.tls_port)
    wait_for(lambda: "TLS handshake with MASTER failed" in replica.read_log(), what="handshake failure logged")
    assert r.info("replication")["master_link_status"] == "down"
    assert r.ping()


# ---------------------------------------------------------------- tools

def bench_tls_run(bench, certs, port, tmp_path, tool_engine, pipeline):
    """redis-like-benchmark --tls --engine tool_engine: SET and GET, 3001
    each, 2000-byte values (a -P 16 batch spans several TLS records)."""
    path = tmp_path / ("bench-%s-%d.json" % (tool_engine, pipeline))
    out = subprocess.run([bench, "-p", str(port), "--tls", "--cacert", certs["ca.crt"], "--cert", certs["client.crt"],
                          "--key", certs["client.key"], "-q", "--json", str(path), "--engine", tool_engine,
                          "-t", "set,get", "-n", "3001", "-c", "10", "--threads", "2", "-P", str(pipeline),
                          "-d", "2000", "-r", "500"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    doc = json.loads(path.read_text())
    name = {"uring": "io_uring", "epoll": "epoll"}[tool_engine]
    assert [t["engine"] for t in doc["tests"]] == [name, name]
    assert [t["requests"] for t in doc["tests"]] == [3001, 3001]
    assert [t["errors"] for t in doc["tests"]] == [0, 0]


@pytest.mark.parametrize("server", ENGINES + ["redis"])
def test_benchmark_tool_tls(start_server, certs, server, tmp_path):
    """Both of the tool's engines over TLS, without and with pipelining,
    against our TLS server on each of its engines and Debian's redis-server
    with the same TLS settings; the server counts every request."""
    from conftest import ROOT
    s = start_tls(start_server, certs, server, binary=REDIS_SERVER if server == "redis" else None)
    bench = os.environ.get("RL_BENCH", os.path.join(ROOT, "src", "redis-like-benchmark"))  # as test_benchmark_tool
    c = s.client()
    for tool_engine in ("uring", "epoll"):
        for pipeline in (1, 16):
            c.config_resetstat()
            bench_tls_run(bench, certs, s.tls_port, tmp_path, tool_engine, pipeline)
            stats = c.info("commandstats")
            assert stats["cmdstat_set"]["calls"] == stats["cmdstat_get"]["calls"] == 3001
            assert 0 < c.dbsize() <= 500 and len(c.get(c.randomkey())) == 2000
    if server == "redis":
        return
    base = [bench, "-p", str(s.tls_port), "--tls", "--cacert", certs["ca.crt"]]
    # -k 0: every reply closes the connection and a new session replaces it
    c.config_resetstat()
    out = subprocess.run(base + ["--cert", certs["client.crt"], "--key", certs["client.key"], "-q", "--engine",
                                 "uring", "-k", "0", "-t", "incr", "-n", "300", "-c", "4"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "INCR" in out.stdout, out.stderr
    assert c.info("commandstats")["cmdstat_incr"]["calls"] == 300
    assert c.info("stats")["total_connections_received"] >= 300
    for tool_engine in ("uring", "epoll"):
        # no client certificate under tls-auth-clients yes: the tool reports the failure
        out = subprocess.run(base + ["-q", "--engine", tool_engine, "-t", "ping", "-n", "10"],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode != 0 or "PING" not in out.stdout
    # --cert without --tls is refused
    out = subprocess.run([bench, "-p", str(s.tls_port), "--cert", certs["client.crt"], "-n", "1"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode != 0 and "need --tls" in out.stderr


def test_renegotiation_refused(start_server, certs):
    """A TLS 1.2 client asking to renegotiate (openssl s_client's "R") is
    refused with OpenSSL's alert; the server goes on serving."""
    s = start_tls(start_server, certs)
    cmd = ["openssl", "s_client", "-tls1_2", "-connect", "127.0.0.1:%d" % s.tls_port, "-CAfile", certs["ca.crt"],
           "-cert", certs["client.crt"], "-key", certs["client.key"]]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    p.stdin.write(b"PING\n")
    p.stdin.flush()
    time.sleep(0.5)
    p.stdin.write(b"R\n")
    p.stdin.flush()
    time.sleep(0.5)
    try:
        p.stdin.write(b"PING\n")
        p.stdin.close()
    except BrokenPipeError:
        pass
    try:
        p.wait(timeout=10)
    finally:
        if p.poll() is None:  # our own child, by its pid
            p.kill()
            p.wait()
    out = p.stdout.read().decode(errors="replace")
    assert "+PONG" in out
    assert "no renegotiation" in out
    assert out.count("+PONG") == 1  # nothing after the refused renegotiation
    assert tls_client(certs, s.tls_port).ping()


# ---------------------------------------------------------------- Sentinel

SENTINEL_BIN = "/usr/bin/redis-sentinel"


@pytest.mark.slow
def test_sentinel_failover_over_tls(start_server, certs, tmp_path):
    """Debian's redis-sentinel with TLS only (port 0, tls-replication yes)
    monitors our TLS master and its TLS replica; the master is killed, the
    replica (announced by its tls-port) is promoted over TLS."""
    extra = ("--tls-replication", "yes", "--repl-ping-replica-period", "1", "--repl-diskless-sync-delay", "0")
    m = start_tls(start_server, certs, extra=extra)
    rep = start_tls(start_server, certs, extra=extra)
    rep.client().replicaof("127.0.0.1", m.tls_port)
    wait_link_up(rep.client())
    assert m.client().info("replication")["slave0"]["port"] == rep.tls_port
    m.client().set("before", "1")
    sport = free_port()
    conf = tmp_path / "sentinel.conf"
    conf.write_text("port 0\ntls-port %d\nbind 127.0.0.1\ndir %s\ntls-cert-file %s\ntls-key-file %s\n"
                    "tls-ca-cert-file %s\ntls-replication yes\nsentinel monitor mymaster 127.0.0.1 %d 1\n"
                    "sentinel down-after-milliseconds mymaster 1000\nsentinel failover-timeout mymaster 6000\n" %
                    (sport, tmp_path, certs["server.crt"], certs["server.key"], certs["ca.crt"], m.tls_port))
    with open(tmp_path / "sentinel.log", "w") as log:
        sn = subprocess.Popen([SENTINEL_BIN, str(conf)], stdout=log, stderr=subprocess.STDOUT, cwd=str(tmp_path))
    try:
        s = tls_client(certs, sport)
        wait_for(lambda: _quiet(lambda: len(s.execute_command("SENTINEL", "REPLICAS", "mymaster")) == 1), 30,
                 step=0.2, what="sentinel sees the replica over TLS")
        wait_for(lambda: rep.client().get("before") == "1", what="replicated")
        m.proc.kill()
        m.proc.wait()
        try:
            wait_for(lambda: _quiet(lambda: int(s.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME",
                                                                  "mymaster")[1]) == rep.tls_port),
                     40, step=0.2, what="failover to the replica")
        except AssertionError:
            raise AssertionError((tmp_path / "sentinel.log").read_text()[-3000:] + rep.read_log()[-3000:])
        wait_for(lambda: rep.client().role()[0] == "master", 20, what="replica promoted")
        assert tls_client(certs, rep.tls_port).set("after", "2")
    finally:
        sn.terminate()
        try:
            sn.wait(timeout=10)
        except subprocess.TimeoutExpired:
            sn.kill()
            sn.wait()


def _quiet(cond):
    try:
        return cond()
    except (redis.exceptions.ConnectionError, redis.exceptions.ResponseError, redis.exceptions.TimeoutError):
        return False


def _client_ctx(certs):
    ctx = ssl.create_default_context(cafile=certs["ca.crt"])
    ctx.load_cert_chain(certs["client.crt"], certs["client.key"])
    return ctx


def _resumed(ctx, port, session=None):
    """(session, reused) of one TLS 1.3 connection that ran a PING."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost", session=session) as s:
            s.sendall(b"PING\r\n")
            assert s.recv(16) == b"+PONG\r\n"  # the tickets came before it
            return s.session, s.session_reused


def test_session_caching_setting(start_server, certs):
    s = start_tls(start_server, certs)
    ctx = _client_ctx(certs)
    sess, reused = _resumed(ctx, s.tls_port)
    assert not reused
    assert _resumed(ctx, s.tls_port, sess)[1]  # tls-session-caching yes (the default): resumed
    s.client().config_set("tls-session-caching", "no")
    ctx = _client_ctx(certs)
    sess, _ = _resumed(ctx, s.tls_port)
    assert not _resumed(ctx, s.tls_port, sess)[1]  # no tickets, no cache: a full handshake
