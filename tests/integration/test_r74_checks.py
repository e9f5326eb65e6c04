"""Small Redis 7.4.1 behaviours of issue 47, against 7.4.1 itself (live from
utils/dev/redis74-ref.sh, else transcripts/r74_checks_74.json.gz; ref74.py).

- ACL LOG entries carry 7.2's entry-id, timestamp-created and
  timestamp-last-updated: ids count up for the life of the process (ACL LOG
  RESET does not restart them, a denial that acllog-max-len 0 drops uses
  none), a repeated denial bumps count and timestamp-last-updated only.
- DEBUG and MODULE LOAD/LOADEX/UNLOAD are refused by enable-debug-command /
  enable-module-command right after the arity check: before NOAUTH and the
  ACL (no ACL LOG entry), inside MULTI as a refused command (EXECABORT),
  counted as rejected_calls.
- CONFIG SET (in the handler, after the ACL) reports the first fault in
  argument order: an unknown, immutable, protected (enable-protected-configs)
  or repeated name."""
import time

import pytest

import conftest
from rawresp import RawConn
from ref74 import Ref74

pytestmark = pytest.mark.differential


@pytest.fixture(scope="module")
def ref():
    r = Ref74("r74_checks")
    yield r
    r.stop()


@pytest.fixture(scope="module")
def ours():
    # enable-debug-command no (Redis's default) after the test default "local"
    s = conftest.ServerProcess(conftest.SERVER, ["--enable-debug-command", "no"])
    yield s
    s.stop()


def pairs(flat):
    return dict(zip(flat[0::2], flat[1::2]))


def acl_log_view(entries):
    """ACL LOG as RESP2 lists, with what differs between runs (ages, client
    info, clock values) replaced by what must hold of it."""
    out = []
    for e in entries:
        m = pairs(e)
        created, updated = m[b"timestamp-created"], m[b"timestamp-last-updated"]
        assert abs(created - time.time() * 1000) < 60000
        view = []
        for k, v in zip(e[0::2], e[1::2]):
            if k == b"age-seconds":
                v = "age"
            elif k == b"client-info":
                v = b"addr=" in v
            elif k == b"timestamp-created":
                v = "created"
            elif k == b"timestamp-last-updated":
                v = "same" if updated == created else ("later" if updated > created else "earlier")
            view.append((k, v))
        out.append(view)
    return out


def run_acl_log(port):
    admin = RawConn(port)
    user = RawConn(port)
    out = []
    try:
        admin.call("ACL", "LOG", "RESET")
        admin.call("ACL", "SETUSER", "u", "on", ">pw", "~k*", "+get", "+ping")
        out.append(user.call("AUTH", "u", "pw"))
        out.append(user.call("SET", "k", "v"))  # command denied
        out.append(user.call("GET", "other"))  # key denied
        out.append(user.call("AUTH", "u", "wrong"))  # auth denied
        time.sleep(0.01)
        out.append(user.call("SET", "k", "v"))  # the same denial again: count 2
        out.append(acl_log_view(admin.call("ACL", "LOG")))
        out.append(acl_log_view(admin.call("ACL", "LOG", "1")))
        out.append(admin.call("ACL", "LOG", "RESET"))
        out.append(user.call("SET", "k", "v"))  # ids go on after RESET
        out.append(acl_log_view(admin.call("ACL", "LOG")))
        admin.call("CONFIG", "SET", "acllog-max-len", "0")
        out.append(user.call("GET", "dropped"))  # not kept: no id used
        admin.call("CONFIG", "SET", "acllog-max-len", "128")
        out.append(user.call("GET", "kept"))
        out.append(acl_log_view(admin.call("ACL", "LOG")))
    finally:
        admin.call("ACL", "DELUSER", "u")
        admin.call("ACL", "LOG", "RESET")
        admin.close()
        user.close()
    return out


def test_acl_log_entry_ids_and_timestamps_are_74s(ours, ref):
    mine = run_acl_log(ours.port)
    assert mine == ref.reply(["acl_log"], lambda: run_acl_log(ref.port))
    keys = [k for k, _ in mine[5][0]]
    assert keys[-3:] == [b"entry-id", b"timestamp-created", b"timestamp-last-updated"]
    # newest first: the repeated SET (id 0, count 2), auth (2), key (1)
    assert [pairs([x for kv in e for x in kv])[b"entry-id"] for e in mine[5]] == [0, 2, 1]


def cmdstat(conn, name):
    """INFO commandstats' calls, rejected_calls and failed_calls for name."""
    info = conn.call("INFO", "commandstats").decode()
    for line in info.splitlines():
        if line.startswith("cmdstat_%s:" % name):
            f = dict(kv.split("=") for kv in line.split(":", 1)[1].split(","))
            return [int(f["calls"]), int(f["rejected_calls"]), int(f["failed_calls"])]
    return None


def run_protected(port):
    admin = RawConn(port)
    user = RawConn(port)
    anon = None
    out = []
    try:
        admin.call("CONFIG", "RESETSTAT")
        admin.call("ACL", "LOG", "RESET")
        admin.call("ACL", "SETUSER", "lim", "on", ">pw", "-@all", "+ping", "+multi", "+exec")
        out.append(user.call("AUTH", "lim", "pw"))
        out.append(user.call("DEBUG", "OBJECT", "x"))  # protected, not NOPERM
        out.append(user.call("DEBUG"))  # arity first
        out.append(user.call("MODULE", "LOAD", "/nonexistent.so"))
        out.append(user.call("MODULE", "UNLOAD", "m"))
        out.append(user.call("MODULE", "LIST"))  # not protected: NOPERM
        out.append(user.call("MULTI"))
        out.append(user.call("DEBUG", "SLEEP", "0"))
        out.append(user.call("PING"))
        out.append(user.call("EXEC"))
        out.append(len(admin.call("ACL", "LOG")))  # MODULE LIST's denial only
        # NOAUTH comes after the protected check
        admin.call("ACL", "SETUSER", "default", "resetpass", ">dpw")
        anon = RawConn(port)
        out.append(anon.call("DEBUG", "SLEEP", "0"))
        out.append(anon.call("MODULE", "LOADEX", "/x.so"))
        out.append(anon.call("GET", "k"))
        out.append(anon.call("AUTH", "dpw"))
        out.append(anon.call("ACL", "SETUSER", "default", "nopass"))
        out.append(cmdstat(admin, "debug"))
        out.append(cmdstat(admin, "module|load"))
        out.append(cmdstat(admin, "module|loadex"))
    finally:
        admin.call("ACL", "SETUSER", "default", "nopass")
        admin.call("ACL", "DELUSER", "lim")
        for c in (admin, user, anon):
            if c:
                c.close()
    return out


def test_debug_and_module_refused_before_noauth_and_acl(ours, ref):
    mine = run_protected(ours.port)
    assert mine == ref.reply(["protected"], lambda: run_protected(ref.port))
    assert mine[1][1].startswith("ERR DEBUG command not allowed.")
    assert mine[3][1].startswith("ERR MODULE command not allowed.")
    assert mine[5][1].startswith("NOPERM")
    assert mine[11][1].startswith("ERR DEBUG command not allowed.")
    assert mine[13][1].startswith("NOAUTH")


CONFIG_SETS = [
    ["dir", "/tmp", "nosuch", "1"],
    ["daemonize", "yes", "nosuch", "1"],
    ["dir", "/tmp", "daemonize", "yes"],
    ["daemonize", "yes", "dir", "/tmp"],
    ["maxmemory", "1", "maxmemory", "2", "dir", "/tmp"],
    ["maxmemory", "1", "MAXMEMORY", "2", "nosuch", "1"],
    ["dbfilename", "x.rdb"],
    ["nosuch", "1"],
]


def run_config_sets(port):
    c = RawConn(port)
    try:
        return [c.call("CONFIG", "SET", *args) for args in CONFIG_SETS]
    finally:
        c.close()


def test_config_set_reports_the_first_fault(ours, ref):
    mine = run_config_sets(ours.port)
    assert mine == ref.reply(["config_set"], lambda: run_config_sets(ref.port))
    # the first fault in argument order, an unknown name included
    assert mine[0] == ("err", "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config")
    assert mine[1] == ("err", "ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable "
                              "config")
    assert mine[7] == ("err", "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'")
