"""The documentation tells the truth about the server (issue 48).

README.md and docs/*.md (the measurement log docs/benchmarks-history.md
aside, which records what was true when each run was made) are read as
text and held to a started server:

  - README.md has at most 250 lines;
  - every relative link (and image) in them, BENCHMARKS.md and the log
    resolves to a file, and an anchor to a heading of that file;
  - every setting named in backticks (a hyphenated lower-case word, or a
    `*_cpulist`) is a CONFIG GET parameter, a start-up-only directive that
    a config line is accepted for, or one of Redis 7.0.15's parameters
    (its CONFIG GET answers it; the pages name it as missing here);
    NOT_SETTINGS names the hyphenated words that are programs, values or
    fields;
  - every command named in backticks (an upper-case first word) is in
    COMMAND LIST (a subcommand: listed, or answered), or is listed as
    absent in docs/compatibility.md, or is one of the later Redis commands
    the pages name as missing (LATER: these must really be missing); an
    upper-case word with an underscore that is no command is an identifier
    (an environment variable, a C constant) and is left alone;
    NOT_COMMANDS names the other upper-case words that are keywords or
    error codes;
  - every ```redis-cli block runs line by line against a started server
    without an error reply, and every ```sh runnable block runs in bash
    from the repository root with redis-cli and the benchmark tool pointed
    at that server; a ```sh runnable ports=7001,7002 block starts servers
    of its own: it runs with those ports replaced by free ones and /tmp by
    a directory of the test's, and every pid file it leaves is stopped.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_docs.py"""
import glob
import os
import re
import shlex
import signal
import subprocess

import pytest

from conftest import ROOT, SERVER, free_port
from rawresp import RawConn
from test_command_coverage import absent
from test_config_70 import missing_names

README = os.path.join(ROOT, "README.md")
HISTORY = os.path.join(ROOT, "docs", "benchmarks-history.md")
PAGES = [README] + sorted(p for p in glob.glob(os.path.join(ROOT, "docs", "*.md")) if p != HISTORY)
LINKED = PAGES + [HISTORY, os.path.join(ROOT, "BENCHMARKS.md")]  # their links must resolve too

# Directives taken in a config file or on the command line but not by
# CONFIG GET (src/config.c, redis_only), with a value that asks for what
# redis-like does anyway; `user` lines are ACL users.
START_UP_ONLY = {"io-threads": "1", "io-threads-do-reads": "no", "crash-memcheck-enabled": "no"}

# Hyphenated words in backticks that are not settings.
NOT_SETTINGS = {
    "apt-get", "redis-cli", "redis-benchmark", "redis-sentinel", "redis-check-rdb", "redis-check-aof",
    "redis-rdb-bgsave", "redis-aof-rewrite", "redis-rdb-to-slaves",  # process titles
    "jemalloc-q8",  # an allocator model's name in MEMORY ALLOCATOR-ADVICE
    "on-empty-db",  # a value of repl-diskless-load
    "multi-mem",  # a CLIENT LIST field
    "slow-clocksource", "xen-clocksource",  # --check-system's checks
}

# Upper-case words in backticks (without an underscore) that are not
# commands: keywords, error codes, make and environment variables,
# Sentinel's own command, a --check-system check.
NOT_COMMANDS = {
    "FORCE", "USER", "NOPERM", "WRONGPASS", "SENTINEL", "LAYERS", "CFLAGS", "SANITIZER", "QUIET", "HASH",
    "DISTRIBUTION", "QUORUM", "THP",
}

# Commands of later Redis versions the pages name as not implemented.
LATER = {"waitaof", "client|no-touch"}

SETTING = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)+$|^[a-z]+_cpulist$")
COMMAND = re.compile(r"^[A-Z][A-Z0-9]*(?:[-_][A-Z0-9]+)*$")
SUBCOMMANDS = re.compile(r"^[A-Z][A-Z0-9-]*(?:\|[A-Z][A-Z0-9-]*)*$")


def read(path):
    with open(path) as f:
        return f.read()


def prose(text):
    """The text outside fenced blocks."""
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def spans(path):
    """Inline code spans outside fenced blocks, whitespace-normalised."""
    return [" ".join(s.split()) for s in re.findall(r"`([^`]+)`", prose(read(path)))]


def blocks(path, info):
    """Fenced blocks whose info string is `info`."""
    return re.findall(r"^```" + re.escape(info) + r"\n(.*?)^```", read(path), flags=re.M | re.S)


def slug(heading):
    """GitHub's anchor for a heading."""
    h = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return h.replace(" ", "-")


def short(path):
    return os.path.relpath(path, ROOT)


def test_readme_is_short():
    with open(README) as f:
        n = sum(1 for _ in f)
    assert n <= 250, "README.md has %d lines; issue 48 allows 250" % n


def test_every_relative_link_resolves():
    bad = []
    for page in LINKED:
        for target in re.findall(r"\]\(([^)\s]+)\)", prose(read(page))):
            if re.match(r"^[a-z]+:", target):
                continue  # http(s), mailto
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            if not os.path.exists(full):
                bad.append("%s: %s (no such file)" % (short(page), target))
            elif anchor and full.endswith(".md"):
                heads = {slug(h) for h in re.findall(r"^#+ (.*)$", prose(read(full)), re.M)}
                if anchor not in heads:
                    bad.append("%s: %s (no such heading)" % (short(page), target))
    assert not bad, bad


class Conn(RawConn):
    """A raw connection (redis-py neither speaks RESP3 for `HELLO 3` nor
    leaves replies unparsed): call() returns the reply, err() the error
    text of an error reply or None."""

    def err(self, *args):
        reply = self.call(*args)
        if isinstance(reply, tuple) and reply[0] == "err":
            return reply[1]
        return None


@pytest.fixture(scope="module")
def client(server):
    c = Conn(server.port)
    yield c
    c.close()


def config_has(c, name):
    return bool(c.call("CONFIG", "GET", name))


def test_every_setting_named_exists(client, start_server, redis_ref):
    named = {}
    for page in PAGES:
        for s in spans(page):
            word = s.split()[0]
            if SETTING.match(word) and word not in NOT_SETTINGS:
                named.setdefault(word, short(page))
    assert len(named) > 50  # the pages name settings: the scan finds them
    ours = {n.decode() for n in client.call("CONFIG", "GET", "*")[0::2]}
    assert not NOT_SETTINGS & ours, "a word listed as not a setting is one"
    # The start-up-only directives are taken as config lines.
    args = [a for name, value in START_UP_ONLY.items() for a in ("--" + name, value)]
    assert start_server(args=args).client().ping()
    ref = Conn(redis_ref.port)
    redis_only = missing_names()
    bad = [(w, page) for w, page in sorted(named.items())
           if not config_has(client, w) and w not in START_UP_ONLY and w not in redis_only
           and not config_has(ref, w)]
    ref.close()
    assert not bad, "settings named in the docs that do not exist: %s" % bad


def command_table(c):
    return {n.decode().lower() for n in c.call("COMMAND", "LIST")}


def subcommand_answered(c, cmd, sub):
    """A subcommand left out of COMMAND LIST (MEMORY SIZES...): its
    command's HELP names it, or the server answers it with something
    other than "unknown subcommand"."""
    help_lines = c.call(cmd, "HELP")
    text = " ".join(x.decode() if isinstance(x, bytes) else str(x) for x in help_lines) \
        if isinstance(help_lines, list) else ""
    if sub.upper() in text.upper():
        return True
    e = c.err(cmd, sub)
    return e is None or "unknown subcommand" not in e.lower()


def test_every_command_named_exists(client):
    table = command_table(client)
    documented_absent = absent()
    assert not LATER & table, "a command the docs call missing is here now: update the docs and LATER"
    assert not {w.lower() for w in NOT_COMMANDS} & table, "a word listed as not a command is one"
    containers = {n.split("|")[0] for n in table if "|" in n}
    bad, seen = [], 0
    for page in PAGES:
        for s in spans(page):
            words = s.split()
            first = words[0]
            if not COMMAND.match(first) or len(first) < 2 or first in NOT_COMMANDS:
                continue
            seen += 1
            cmd = first.lower()
            if cmd in documented_absent or cmd in LATER or ("_" in cmd and cmd not in table):
                continue
            if cmd not in table:
                bad.append((s, short(page)))
                continue
            if cmd in containers and len(words) > 1 and SUBCOMMANDS.match(words[1]):
                for sub in words[1].split("|"):
                    name = cmd + "|" + sub.lower()
                    if name in table or name in documented_absent or name in LATER:
                        continue
                    if not subcommand_answered(client, cmd, sub):
                        bad.append((s, short(page)))
    assert seen > 100  # the pages name commands: the scan finds them
    assert not bad, "commands named in the docs that do not exist: %s" % bad


def test_redis_cli_blocks_run(server):
    ran = 0
    for page in PAGES:
        for block in blocks(page, "redis-cli"):
            c = Conn(server.port)  # a new connection per block, as redis-cli opens
            assert c.err("FLUSHALL") is None
            for line in block.splitlines():
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                e = c.err(*shlex.split(line))
                assert e is None, "%s: `%s` answered %s" % (short(page), line, e)
                ran += 1
            c.close()
    assert ran >= 20


def test_runnable_shell_blocks_run(server):
    """```sh runnable blocks, in bash -e from the repository root; redis-cli
    and the benchmark tool reach the test's server (its port added)."""
    bin_dir = os.path.dirname(SERVER)
    prelude = ("redis-cli() { command redis-cli -p %d \"$@\"; }\n"
               "src/redis-like-benchmark() { command %s -p %d \"$@\"; }\n"
               "src/redis-like-server() { command %s \"$@\"; }\n"   # the build under test
               % (server.port, shlex.quote(os.path.join(bin_dir, "redis-like-benchmark")), server.port,
                  shlex.quote(SERVER)))
    ran = 0
    for page in PAGES:
        for block in blocks(page, "sh runnable"):
            p = subprocess.run(["bash", "-e", "-c", prelude + block], cwd=ROOT, capture_output=True, text=True,
                               timeout=60)
            assert p.returncode == 0, "%s: block failed (%d):\n%s\n%s%s" % (short(page), p.returncode, block,
                                                                          p.stdout[-2000:], p.stderr[-2000:])
            ran += 1
    assert ran >= 2


def test_every_benchmark_figure_says_the_machine_load():
    """BENCHMARKS.md: each table has a "machine load" column, filled in
    every row (a load average, "quiet", or why it was not recorded)."""
    lines = read(os.path.join(ROOT, "BENCHMARKS.md")).splitlines()
    tables = 0
    for i, line in enumerate(lines[:-1]):
        if not (line.startswith("| ") and lines[i + 1].startswith("| ---")):
            continue
        tables += 1
        head = [c.strip() for c in line.strip().strip("|").split("|")]
        assert "machine load" in head, "table without a machine load column: %s" % line[:80]
        col = head.index("machine load")
        for row in lines[i + 2:]:
            if not row.startswith("|"):
                break
            cells = [c.strip() for c in row.strip().strip("|").split("|")]
            assert len(cells) == len(head) and cells[col], "row without its load: %s" % row[:80]
    assert tables >= 15


def own_server_blocks():
    for page in PAGES:
        for ports, block in re.findall(r"^```sh runnable ports=([0-9,]+)\n(.*?)^```", read(page), flags=re.M | re.S):
            yield page, ports.split(","), block


@pytest.mark.slow
@pytest.mark.parametrize("page,ports,block", list(own_server_blocks()),
                         ids=lambda v: short(v) if isinstance(v, str) and v.endswith(".md") else None)
def test_blocks_that_start_their_own_servers_run(page, ports, block, tmp_path):
    """As written but for the ports (free ones) and /tmp (the test's own
    directory); the servers it leaves running are stopped by pid file."""
    text = block
    for port in ports:
        text = re.sub(r"\b%s\b" % port, str(free_port()), text)
    text = re.sub(r"(?<![\w/])/tmp\b", str(tmp_path), text)
    prelude = "src/redis-like-server() { command %s \"$@\"; }\n" % shlex.quote(SERVER)
    try:
        p = subprocess.run(["bash", "-e", "-c", prelude + text], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, "%s: block failed (%d):\n%s\n%s%s" % (short(page), p.returncode, text,
                                                                      p.stdout[-2000:], p.stderr[-2000:])
    finally:
        for pidfile in glob.glob(os.path.join(str(tmp_path), "*.pid")):
            try:
                os.kill(int(open(pidfile).read()), signal.SIGKILL)
            except (ValueError, ProcessLookupError):
                pass
