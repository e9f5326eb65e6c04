"""ACL: users from the config file and the aclfile, ACL SAVE / LOAD, what
changes to a user do to its live clients, the default user bound to
requirepass, redaction in SLOWLOG and MONITOR, the ACL LOG and the INFO
counters.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_acl.py"""
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

import pytest
import redis

from conftest import SERVER, free_port, start_under_shim
from rawresp import RawConn

PW_HASH = "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"   # sha256("password")


def start_raw(args, conf_text=None):
    """Run the server to see whether it starts: (returncode or None, output)."""
    d = tempfile.mkdtemp(prefix="rl-acl-")
    cmd = [SERVER]
    if conf_text is not None:
        conf = os.path.join(d, "s.conf")
        with open(conf, "w") as f:
            f.write(conf_text)
        cmd.append(conf)
    cmd += ["--port", str(free_port()), "--bind", "127.0.0.1", "--save", "", "--dir", d] + list(args)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=d)
    try:
        out, _ = p.communicate(timeout=5)
        return p.returncode, out.decode(errors="replace")
    except subprocess.TimeoutExpired:
        p.terminate()
        p.wait()
        return None, ""
    finally:
        shutil.rmtree(d, ignore_errors=True)


def auth_client(s, user, pw, **kw):
    return s.client(username=user, password=pw, **kw)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


# ------------------------------------------------------------ config file

def test_config_user_lines_define_users(start_server):
    s = start_server(config_text="user alice on >secret ~app:* +@read +acl|whoami\nuser default on nopass ~* &* +@all -flushall\n")
    r = s.client()
    assert r.execute_command("ACL", "USERS") == ["alice", "default"]
    a = auth_client(s, "alice", "secret")
    assert a.execute_command("ACL", "WHOAMI") == "alice"
    assert a.get("app:1") is None
    with pytest.raises(redis.exceptions.NoPermissionError):
        a.set("app:1", "x")
    with pytest.raises(redis.exceptions.NoPermissionError):
        r.flushall()


def test_config_user_line_error_stops_startup_with_line_number():
    rc, out = start_raw([], "port 0\n# comment\nuser bob on +nosuchcommand\n")
    assert rc not in (None, 0)
    assert "line 3" in out and "nosuchcommand" in out


def test_duplicate_config_user_stops_startup():
    rc, out = start_raw([], "user bob on\nuser bob off\n")
    assert rc not in (None, 0)
    assert "Duplicate user" in out and "line 2" in out


def test_config_users_and_aclfile_are_exclusive(tmp_path):
    acl = tmp_path / "users.acl"
    acl.write_text("user a on nopass\n")
    rc, out = start_raw([], f"aclfile {acl}\nuser b on nopass\n")
    assert rc not in (None, 0)
    assert "not both" in out


def test_config_rewrite_keeps_user_lines(start_server):
    s = start_server(config_text="user alice on >secret ~app:* +@read +acl|whoami\nmaxmemory 0\n")
    r = s.client()
    r.execute_command("ACL", "SETUSER", "carol", "on", "#" + PW_HASH, "~c:*", "+get", "+acl|whoami")
    r.execute_command("ACL", "SETUSER", "alice", "+set")
    assert r.config_rewrite()
    text = open(os.path.join(s.dir, "test.conf")).read()
    lines = [l for l in text.splitlines() if l.startswith("user ")]
    assert len(lines) == 3
    assert any(l.startswith("user alice on sanitize-payload #") and "+set" in l for l in lines)  # 7.4's form
    assert any(l.startswith("user carol on sanitize-payload #" + PW_HASH) for l in lines)
    assert "secret" not in text
    # The rewritten file starts a server with the same users.
    s2 = start_server(config_text=text)
    a = auth_client(s2, "carol", "password")
    assert a.execute_command("ACL", "WHOAMI") == "carol"


# ------------------------------------------------------------ aclfile

def test_aclfile_load_save_roundtrip(start_server, tmp_path):
    acl = tmp_path / "users.acl"
    acl.write_text("user default on nopass ~* &* +@all\nuser app on >pw ~app:* resetchannels -@all +get +set +acl|whoami\n")
    s = start_server(args=["--aclfile", str(acl)])
    r = s.client()
    assert r.execute_command("ACL", "USERS") == ["app", "default"]
    r.execute_command("ACL", "SETUSER", "new", "on", ">npw", "+@hash", "~h:*", "+acl|whoami")
    assert r.execute_command("ACL", "SAVE") == "OK"
    saved = acl.read_text()
    assert "user new on sanitize-payload #" in saved and "npw" not in saved
    assert not [f for f in os.listdir(tmp_path) if ".tmp-" in f]
    # LOAD brings the file back: a user created since then disappears.
    r.execute_command("ACL", "SETUSER", "gone", "on")
    assert r.execute_command("ACL", "LOAD") == "OK"
    assert r.execute_command("ACL", "USERS") == ["app", "default", "new"]
    assert auth_client(s, "new", "npw").execute_command("ACL", "WHOAMI") == "new"


def test_a_relative_aclfile_is_in_dir(start_server, tmp_path):
    """As in Redis (which works in dir), a relative aclfile names a file in
    dir, wherever the server was started from; ACL SAVE writes it there."""
    (tmp_path / "users.acl").write_text("user default on nopass ~* &* +@all\nuser app on nopass +get\n")
    s = start_server(args=["--dir", str(tmp_path), "--aclfile", "users.acl"])  # started from the test's cwd
    r = s.client()
    assert r.execute_command("ACL", "USERS") == ["app", "default"]
    r.execute_command("ACL", "SETUSER", "more", "on")
    assert r.execute_command("ACL", "SAVE") == "OK"
    assert "user more on" in (tmp_path / "users.acl").read_text()


def test_a_missing_aclfile_stops_startup_cleanly(tmp_path):
    """The start-up error is reported and the process exits with 1: no
    crash report (the teardown of a half-started server once crashed)."""
    rc, out = start_raw(["--aclfile", str(tmp_path / "none.acl")])
    assert rc == 1
    assert "Aborting Redis startup because of ACL errors" in out and "none.acl" in out
    assert "BUG REPORT" not in out


def test_acl_load_error_names_line_and_changes_nothing(start_server, tmp_path):
    acl = tmp_path / "users.acl"
    acl.write_text("user app on >pw ~app:* +get +acl|whoami\n")
    s = start_server(args=["--aclfile", str(acl)])
    r = s.client()
    before = r.execute_command("ACL", "LIST")
    a = auth_client(s, "app", "pw")
    assert a.execute_command("ACL", "WHOAMI") == "app"
    acl.write_text("user app on >pw2 ~app:* +get\n\nuser broken on +nosuchcmd\nuser x on\nnot-a-user line\n")
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("ACL", "LOAD")
    msg = str(e.value)
    assert f"{acl}:3: Error in applying operation '+nosuchcmd'" in msg
    assert f"{acl}:5 should start with user keyword" in msg
    assert "no change to the previously active ACL rules was performed" in msg
    assert r.execute_command("ACL", "LIST") == before
    # Running clients of the untouched users keep working.
    assert a.execute_command("ACL", "WHOAMI") == "app"


def test_aclfile_error_stops_startup(tmp_path):
    acl = tmp_path / "users.acl"
    acl.write_text("user ok on nopass\nuser bad on >x %Q~foo\n")
    rc, out = start_raw(["--aclfile", str(acl)])
    assert rc not in (None, 0)
    assert f"{acl}:2: Syntax error" in out


def test_acl_load_save_without_aclfile(r):
    for sub in ("LOAD", "SAVE"):
        with pytest.raises(redis.ResponseError, match="not configured to use an ACL file"):
            r.execute_command("ACL", sub)


def test_acl_save_write_error_keeps_old_file(start_server, fault_shim, tmp_path, monkeypatch):
    acl = tmp_path / "users.acl"
    old = "user default on nopass ~* &* +@all\nuser keep on >pw ~k:* resetchannels -@all +get\n"
    acl.write_text(old)
    ctl = tmp_path / "fault.ctl"
    ctl.write_text("")
    s = start_under_shim(start_server, fault_shim, ctl, ["--aclfile", str(acl)], monkeypatch)
    r = s.client()
    r.execute_command("ACL", "SETUSER", "extra", "on", ">x", "~" + "p" * 200)
    ctl.write_text("write ENOSPC 40 users.acl\n")
    with pytest.raises(redis.ResponseError, match="error trying to save the ACLs"):
        r.execute_command("ACL", "SAVE")
    assert acl.read_text() == old
    assert not [f for f in os.listdir(tmp_path) if ".tmp-" in f]
    ctl.write_text("")
    assert r.execute_command("ACL", "SAVE") == "OK"
    assert "user extra on" in acl.read_text()


def test_crash_during_acl_save_never_truncates(start_server, fault_shim, tmp_path, monkeypatch):
    acl = tmp_path / "users.acl"
    old = "user default on nopass ~* &* +@all\nuser keep on >pw ~k:* resetchannels -@all +get\n"
    acl.write_text(old)
    ctl = tmp_path / "fault.ctl"
    ctl.write_text("")
    s = start_under_shim(start_server, fault_shim, ctl, ["--aclfile", str(acl)], monkeypatch)
    r = s.client()
    for i in range(50):
        r.execute_command("ACL", "SETUSER", f"u{i}", "on", ">x", f"~k{i}:*")
    # Every write to the file being saved now stalls 3 s: the server is
    # killed in the middle of ACL SAVE.
    ctl.write_text("write ENOSPC 100000000 users.acl 3000\n")
    t = threading.Thread(target=lambda: _ignore(lambda: s.client().execute_command("ACL", "SAVE")))
    t.start()
    time.sleep(0.8)
    os.kill(s.proc.pid, signal.SIGKILL)
    s.proc.wait()
    t.join(10)
    assert acl.read_text() == old


def _ignore(fn):
    try:
        fn()
    except Exception:
        pass


# ------------------------------------------------------------ live clients

def raw_auth(server, user, pw):
    c = RawConn(server.port)
    assert c.call("AUTH", user, pw) == "OK"
    return c


def closed(conn):
    """Whether the server closed conn (a PING gets no answer)."""
    try:
        conn.send("PING")
        conn.read()
        return False
    except (ConnectionError, OSError):
        return True


def test_deluser_closes_its_clients(r, server):
    r.execute_command("ACL", "SETUSER", "victim", "on", ">v", "+@all", "~*")
    v = raw_auth(server, "victim", "v")
    other = raw_auth(server, "default", "x")
    assert v.call("PING") == "PONG"
    assert r.execute_command("ACL", "DELUSER", "victim", "nosuch") == 1
    assert closed(v)
    assert other.call("PING") == "PONG"
    with pytest.raises(redis.ResponseError, match="default"):
        r.execute_command("ACL", "DELUSER", "default")


def test_deluser_of_self_replies_then_closes(r, server):
    r.execute_command("ACL", "SETUSER", "selfdel", "on", ">s", "+@all", "~*")
    me = raw_auth(server, "selfdel", "s")
    assert me.call("ACL", "DELUSER", "selfdel") == 1
    assert closed(me)


def test_setuser_narrowing_channels_kills_subscribers(r, server):
    r.execute_command("ACL", "SETUSER", "sub", "on", ">s", "+@all", "~*", "resetchannels", "&news", "&sport")
    c = raw_auth(server, "sub", "s")
    assert c.call("SUBSCRIBE", "news")[0] == b"subscribe"
    keep = raw_auth(server, "sub", "s")
    # Adding a channel keeps the subscriber; revoking its channel closes it.
    r.execute_command("ACL", "SETUSER", "sub", "&weather")
    assert r.publish("news", "x") == 1
    assert c.read() == [b"message", b"news", b"x"]
    r.execute_command("ACL", "SETUSER", "sub", "resetchannels", "&sport")
    assert r.publish("news", "z") == 0
    assert closed(c)
    assert keep.call("PING") == "PONG"   # not subscribed: untouched


def test_disabled_user_keeps_connection_but_cannot_auth(r, server):
    r.execute_command("ACL", "SETUSER", "dis", "on", ">d", "+@all", "~*")
    c = raw_auth(server, "dis", "d")
    r.execute_command("ACL", "SETUSER", "dis", "off")
    assert c.call("PING") == "PONG"   # Redis keeps authenticated connections of a disabled user
    for args in (("AUTH", "dis", "d"), ("HELLO", "2", "AUTH", "dis", "d")):
        assert RawConn(server.port).call(*args) == ("err", "WRONGPASS invalid username-password pair or user is disabled.")


# ------------------------------------------------------------ default user

def test_requirepass_is_the_default_users_password(start_server):
    s = start_server(args=["--requirepass", "topsecret"])
    with pytest.raises(redis.exceptions.AuthenticationError):
        s.client().ping()
    r = s.client(password="topsecret")
    info = r.execute_command("ACL", "GETUSER", "default")
    d = dict(zip(info[0::2], info[1::2]))
    assert d["passwords"] == [subprocess.run(["sha256sum"], input=b"topsecret", capture_output=True)
                              .stdout.decode().split()[0]]
    r.config_set("requirepass", "")
    assert s.client().ping()
    r.config_set("requirepass", "again")
    assert s.client(username="default", password="again").ping()


def test_default_user_without_password_needs_no_auth_until_changed(start_server):
    s = start_server()
    r = s.client()
    r.execute_command("ACL", "SETUSER", "default", ">pw")
    with pytest.raises(redis.exceptions.AuthenticationError):
        s.client().ping()
    assert r.ping()   # already authenticated
    r.execute_command("ACL", "SETUSER", "default", "nopass")
    assert s.client().ping()


# ------------------------------------------------------------ redaction

def test_slowlog_and_monitor_redact_secrets(r, server):
    r.execute_command("ACL", "SETUSER", "red", "on", ">hunter2", "+@all", "~*")
    r.config_set("slowlog-log-slower-than", 0)
    r.slowlog_reset()
    mon = server.client()
    conn = mon.connection_pool.get_connection("x")
    conn.send_command("MONITOR")
    assert conn.read_response() in ("OK", b"OK")
    c = server.client()
    c.execute_command("AUTH", "red", "hunter2")
    c.execute_command("HELLO", "2", "AUTH", "red", "hunter2")
    with pytest.raises(redis.ResponseError):
        c.execute_command("AUTH", "red", "wrongpass1")
    r.execute_command("ACL", "SETUSER", "red", ">newsecret3")
    c.ping()
    lines = []
    deadline = time.time() + 5
    while time.time() < deadline and not any('"ping"' in l.lower() for l in lines):
        lines.append(str(conn.read_response()))
    r.config_set("slowlog-log-slower-than", 10000)
    entries = r.slowlog_get(128)
    text = " ".join(str(e) for e in entries) + " ".join(lines)
    for secret in ("hunter2", "wrongpass1", "newsecret3"):
        assert secret not in text
    assert "(redacted)" in text
    assert not any("setuser" in l.lower() for l in lines)   # ACL is admin: never shown
    auth_lines = [l for l in lines if '"auth"' in l.lower()]
    assert auth_lines and all('"(redacted)"' in l for l in auth_lines)
    conn.disconnect()


def test_getuser_and_log_never_show_passwords(r, server):
    r.execute_command("ACL", "SETUSER", "hid", "on", ">visible-pass", "+@all", "~*")
    text = str(r.execute_command("ACL", "GETUSER", "hid")) + str(r.execute_command("ACL", "LIST"))
    assert "visible-pass" not in text
    r.execute_command("ACL", "LOG", "RESET")
    with pytest.raises((redis.exceptions.AuthenticationError, redis.ResponseError)):
        auth_client(server, "hid", "guess-pass").ping()
    log = r.execute_command("ACL", "LOG")
    assert "guess-pass" not in str(log)
    e = dict(zip(log[0][0::2], log[0][1::2])) if isinstance(log[0], list) else log[0]
    assert e["reason"] == "auth" and e["username"] == "hid"


# ------------------------------------------------------------ log and counters

def test_log_groups_trims_and_counts(r, server):
    r.execute_command("ACL", "LOG", "RESET")
    r.config_resetstat()
    r.execute_command("ACL", "SETUSER", "lg", "on", ">l", "~a:*", "+get", "&c")
    c = auth_client(server, "lg", "l")
    for _ in range(3):
        with pytest.raises(redis.exceptions.NoPermissionError):
            c.get("b")
    with pytest.raises(redis.exceptions.NoPermissionError):
        c.set("a:1", "x")
    log = r.acl_log()
    assert [(e["reason"], e["object"], e["count"]) for e in log] == [("command", "set", 1), ("key", "b", 3)]
    assert log[0]["context"] == "toplevel" and log[0]["username"] == "lg"
    assert log[0]["client-info"]["user"] == "lg"
    info = r.info("stats")
    assert info["acl_access_denied_key"] == 3 and info["acl_access_denied_cmd"] == 1
    r.config_set("acllog-max-len", 1)
    with pytest.raises(redis.exceptions.NoPermissionError):
        c.get("other")
    assert len(r.acl_log()) == 1
    r.config_set("acllog-max-len", 128)
    assert r.execute_command("ACL", "LOG", "RESET") == "OK"
    assert r.acl_log() == []


def test_client_list_shows_user(r, server):
    r.execute_command("ACL", "SETUSER", "cl", "on", ">c", "+@all", "~*")
    c = auth_client(server, "cl", "c")
    assert "user=cl" in c.execute_command("CLIENT", "INFO")


def test_first_args_with_spaces_or_quotes_print_as_written(start_server):
    """A first-argument rule holding a space or a quote is printed as
    written by ACL GETUSER and ACL LIST, and the server lives (Redis 7.4.1
    asserts on reading such a rule back and goes down on ACL GETUSER; our
    debug builds check the printed rules the same way and must not abort,
    and an unbalanced quote must not drop the rule from the text)."""
    r = start_server().client()
    r.execute_command("ACL", "SETUSER", "sp", "reset", "on", "nopass", "+select|a b", "+get")
    r.execute_command("ACL", "SETUSER", "qu", "reset", "on", "nopass", '+select|"x', "+@hash", "-hset")
    assert r.execute_command("ACL", "GETUSER", "sp")[5] == "-@all +select|a b +get"
    assert r.execute_command("ACL", "GETUSER", "qu")[5] == '-@all +select|"x +@hash -hset'
    lines = r.execute_command("ACL", "LIST")
    assert "user qu on nopass sanitize-payload resetchannels -@all +select|\"x +@hash -hset" in lines
    assert r.execute_command("ACL", "DRYRUN", "sp", "SELECT", "a b") == "OK"
    assert r.ping()
