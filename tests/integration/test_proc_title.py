"""set-proc-title, proc-title-template and disable-thp against Debian's
redis-server 7.0.15: the title each server shows as its command line
(/proc/<pid>/cmdline, what ps prints), for itself and for its forked
children, the templates each takes or refuses, and what each leaves of
transparent huge pages.  The servers differ in their binary, port,
config file and socket path, so titles are compared with those replaced
by placeholders."""
import os
import subprocess
import time

import pytest
import redis

from conftest import REDIS_SERVER, SERVER, child_pids, wait_persistence_idle

pytestmark = pytest.mark.differential

BINARIES = ["ours", REDIS_SERVER]
TEMPLATE_ERR = "template format is invalid or contains unknown variables"


def start(start_server, binary, lines=(), args=()):
    """A server started from a config file (so {config-file} has a
    value) holding lines."""
    text = "".join(line + "\n" for line in lines)
    kw = {} if binary == "ours" else {"binary": binary}
    return start_server(list(args), config_text=text, **kw)


def raw_cmdline(pid):
    with open("/proc/%d/cmdline" % pid, "rb") as f:
        return f.read()


def title(pid):
    """The command line up to its first NUL: the whole title (a title is
    one string; an untouched command line's first string is argv[0])."""
    return raw_cmdline(pid).split(b"\0")[0].decode()


def normalized(s, text):
    binary = SERVER if "redis-server" not in s.proc.args[0] else REDIS_SERVER
    return (text.replace(os.path.join(s.dir, "test.conf"), "<CONF>")
            .replace(binary, "<PROG>").replace(str(s.port), "<PORT>")
            .replace(s.dir, "<DIR>"))


def child_title(s, start_job):
    """The title of the child start_job forks, read while it runs (the
    keys are saved one per 50 ms by rdb-key-save-delay).  A child first
    has its parent's title and sets its own right after fork: a title
    equal to the parent's is read again until it changes."""
    parent = title(s.proc.pid)
    start_job()
    deadline = time.time() + 10
    seen = None
    while time.time() < deadline:
        for kid in child_pids(s.proc.pid):
            try:
                seen = title(kid)
            except OSError:
                continue
            if seen and seen != parent:
                return seen
        time.sleep(0.002)
    raise AssertionError("no child with its own title seen (last: %r)" % seen)


@pytest.mark.parametrize("binary", BINARIES)
def test_default_title_is_program_and_listen_address(start_server, binary):
    s = start(start_server, binary)
    assert normalized(s, title(s.proc.pid)) == "<PROG> 127.0.0.1:<PORT>"
    c = s.client()
    assert c.config_get("set-proc-title") == {"set-proc-title": "yes"}
    assert c.config_get("proc-title-template") == {"proc-title-template": "{title} {listen-addr} {server-mode}"}


# Each template, and what both servers make of it: the title, or None
# where CONFIG SET refuses it (and the title stays as it was).
TEMPLATES = [
    ("{title}", None),                        # blank where {title} says nothing
    ("  {title}  ", None),
    ("x {title} y", "x <PROG> y"),
    ("no title", "no title"),
    ("", None),
    ("{title", None),                         # unclosed
    ("{bogus} {title}", None),                # unknown variable
    ("{TITLE} x", None),                      # names are case-sensitive
    ("{}", None),
    ("x{", None),
    ("a}b", "a}b"),                           # a lone } is itself
    ("{title}{{port}}", "<PROG>{port}}"),     # {{ is a literal {
    ("{port}", "<PORT>"),
    ("{tls-port}", "0"),
    ("{server-mode}", None),                  # empty here: blank
    ("{unixsocket}", "<DIR>/s.sock"),         # set in the config file
    ("[{config-file}] {listen-addr}", "[<CONF>] 127.0.0.1:<PORT>"),
    ("{title} {listen-addr} {server-mode} {port} {tls-port} .", "<PROG> 127.0.0.1:<PORT>  <PORT> 0 ."),
]


@pytest.mark.parametrize("binary", BINARIES)
def test_templates_taken_and_refused(start_server, binary, tmp_path):
    s = start_server(config_text="unixsocket %s/s.sock\n" % tmp_path,
                     **({} if binary == "ours" else {"binary": binary}))
    c = s.client()
    got = []
    for tpl, _ in TEMPLATES:
        before = title(s.proc.pid)
        try:
            c.config_set("proc-title-template", tpl)
        except redis.ResponseError as e:
            assert TEMPLATE_ERR in str(e), (tpl, str(e))
            assert title(s.proc.pid) == before, tpl
            got.append((tpl, None))
            continue
        assert c.config_get("proc-title-template")["proc-title-template"] == tpl
        got.append((tpl, normalized(s, title(s.proc.pid)).replace(str(tmp_path), "<DIR>")))
    assert got == TEMPLATES


@pytest.mark.parametrize("binary", BINARIES)
def test_forked_children_have_their_own_title(start_server, binary):
    s = start(start_server, binary, ["rdb-key-save-delay 50000", 'proc-title-template "{title} {port}"'])
    c = s.client()
    c.mset({"k%d" % i: "v" for i in range(20)})
    assert normalized(s, title(s.proc.pid)) == "<PROG> <PORT>"
    assert normalized(s, child_title(s, c.bgsave)) == "redis-rdb-bgsave <PORT>"
    c.config_set("rdb-key-save-delay", "0")
    wait_persistence_idle(c)
    c.config_set("rdb-key-save-delay", "50000")
    assert normalized(s, child_title(s, c.bgrewriteaof)) == "redis-aof-rewrite <PORT>"
    c.config_set("rdb-key-save-delay", "0")
    wait_persistence_idle(c)


@pytest.mark.parametrize("binary", BINARIES)
def test_set_proc_title_no_keeps_the_command_line(start_server, binary):
    s = start(start_server, binary, ["set-proc-title no"])
    cmd = raw_cmdline(s.proc.pid).rstrip(b"\0").split(b"\0")
    assert [a.decode() for a in cmd] == list(s.proc.args)
    c = s.client()
    assert c.config_get("set-proc-title") == {"set-proc-title": "no"}
    with pytest.raises(redis.ResponseError, match="can't set immutable config"):
        c.config_set("set-proc-title", "yes")


def test_bad_template_in_config_file_stops_start_up(tmp_path):
    # Each server refuses the file; ours names the line.
    conf = tmp_path / "bad.conf"
    conf.write_text("port 0\nproc-title-template \"{nope}\"\n")
    for binary in (SERVER, REDIS_SERVER):
        out = subprocess.run([binary, str(conf)], capture_output=True, text=True, timeout=10)
        text = out.stdout + out.stderr
        assert out.returncode == 1, binary
        assert TEMPLATE_ERR in text, (binary, text)
        if binary == SERVER:
            assert "at line 2" in text, text


def thp_enabled(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("THP_enabled:"):
                return int(line.split()[1])
    raise AssertionError("no THP_enabled line (kernel older than 5.0)")


@pytest.mark.parametrize("setting", ["yes", "no"])
def test_disable_thp_leaves_what_redis_leaves(start_server, setting):
    # With the kernel's THP mode "always", disable-thp yes opts the process
    # out; in "madvise" or "never" mode neither server touches it (the
    # mode this machine has decides which case runs; both are compared).
    got = {}
    for binary in BINARIES:
        s = start(start_server, binary, ["disable-thp %s" % setting])
        c = s.client()
        assert c.config_get("disable-thp") == {"disable-thp": setting}
        with pytest.raises(redis.ResponseError, match="can't set immutable config"):
            c.config_set("disable-thp", "no")
        got[binary] = thp_enabled(s.proc.pid)
    assert got["ours"] == got[REDIS_SERVER]
    with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
        always = "[always]" in f.read()
    assert got["ours"] == (0 if always and setting == "yes" else 1)
