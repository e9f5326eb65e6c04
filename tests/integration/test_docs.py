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
  - every fenced block is marked by its info string and run or mapped
    (docs/development.md, "Command blocks in the docs"): ```redis-cli
    lines go to a started server; ```sh runnable blocks run in bash from
    the repository root with redis-cli and the benchmark tool pointed at
    it (slow: in the slow part; fresh: at a server of their own; datadir:
    beside a server's dump.rdb and appendonlydir; ports=...: starting
    servers of their own on free ports, /tmp replaced by a directory of
    the test's); ```sh serves lines must start a server that answers;
    ```sh make-n make lines must build for the allocator they name;
    ```sh tested-by= blocks name the tests (or .ci/run) that run the
    same thing, which must exist; ```console transcripts run their `$ `
    lines; ```text blocks hold no command.  A block without a known
    marking fails, so a new page needs only its markings.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_docs.py"""
import glob
import os
import re
import shlex
import signal
import socket
import subprocess
import time

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
    "apt-get", "tcl-tls", "redis-cli", "redis-benchmark", "redis-sentinel", "redis-check-rdb", "redis-check-aof",
    "redis-rdb-bgsave", "redis-aof-rewrite", "redis-rdb-to-slaves",  # process titles
    "jemalloc-q8",  # an allocator model's name in MEMORY ALLOCATOR-ADVICE
    "on-empty-db",  # a value of repl-diskless-load
    "no-cluster", "allow-cross-slot-keys",  # script shebang flags
    "multi-mem",  # a CLIENT LIST field
    "slow-clocksource", "xen-clocksource",  # --check-system's checks
    "redis-like-benchmark", "redis-server",  # programs
    "active-time", "lib-name", "lib-ver", "qbuf-free",  # XINFO and CLIENT LIST fields
    "sanitize-payload", "skip-sanitize-payload",  # ACL rules
    "client-info", "entry-id", "timestamp-created", "timestamp-last-updated",  # ACL LOG fields
    "expire-cycle",  # a latency event
}

# Settings of Redis 7.2/7.4 that docs/compatibility-74.md names as missing:
# they must really be missing (CONFIG GET answers nothing).
LATER_SETTINGS = set()

# Upper-case words in backticks (without an underscore) that are not
# commands: keywords, error codes, make and environment variables,
# Sentinel's own command, a --check-system check.
NOT_COMMANDS = {
    "FORCE", "USER", "NOPERM", "WRONGPASS", "SENTINEL", "LAYERS", "CFLAGS", "SANITIZER", "QUIET", "HASH",
    "DISTRIBUTION", "QUORUM", "THP", "TAKEOVER", "BLOCK", "GETKEYS",
}

# Commands of later Redis versions the pages name as not implemented.
LATER = set()

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
    assert not [w for w in LATER_SETTINGS if config_has(client, w)], "a 7.4 setting the docs call missing is here"
    bad = [(w, page) for w, page in sorted(named.items())
           if not config_has(client, w) and w not in START_UP_ONLY and w not in redis_only
           and not config_has(ref, w) and w not in LATER_SETTINGS]
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


# ---------------------------------------------------------------------------
# Command blocks.  Every fenced block of the pages is marked by its info
# string: how this file runs it, or which test runs the same thing
# (docs/development.md, "Command blocks in the docs", is the convention).
# A block with no marking, or one this file does not know, fails
# test_every_block_is_run_or_mapped: a new page only needs its markings.

CI_SCRIPT = ".ci/run"
PORTS_ITEM = re.compile(r"^(?:([A-Z][A-Z0-9_]*):)?(\d{4,5})(?:\+(\d+))?$")
# A line of a `text` block that reads like a command to type.
LOOKS_LIKE_COMMAND = re.compile(r"^\s*(\$ |make\b|redis-cli\b|src/redis-like-|utils/\w+/|\./|/usr/bin/|sudo\b|"
                                r"apt-get\b|python3?\b)")
SH_KINDS = {"runnable": {"slow", "fresh", "datadir", "ports"}, "serves": {"ports"}, "make-n": set(),
            "tested-by": set()}


class Block:
    """One fenced block: page, line of its opening fence, info string,
    body; kind and options parsed from the info string (problem: why it is
    not a known marking, else None)."""

    def __init__(self, page, line, info, body):
        self.page, self.line, self.info, self.body = page, line, info, body
        self.kind, self.options, self.problem = None, {}, None
        words = info.split()
        if words in (["redis-cli"], ["console"], ["text"]):
            self.kind = words[0]
        elif len(words) >= 2 and words[0] == "sh":
            name, _, value = words[1].partition("=")
            if name not in SH_KINDS or (name == "tested-by") != bool(value):
                self.problem = "unknown marking"
                return
            self.kind = "sh " + name
            if value:
                self.options[name] = value
            for w in words[2:]:
                opt, _, val = w.partition("=")
                if opt not in SH_KINDS[name] or (opt == "ports") != bool(val):
                    self.problem = "unknown option %r" % w
                self.options[opt] = val or True
            if "ports" in self.options and not all(PORTS_ITEM.match(i) for i in self.options["ports"].split(",")):
                self.problem = "ports= takes [VAR:]port[+count],..."
            if name == "serves" and "ports" not in self.options:
                self.problem = "sh serves needs ports="
            if name == "runnable" and len(set(self.options) & SH_KINDS["runnable"]) > 1:
                self.problem = "one of slow, fresh, datadir, ports= at most"  # each has its own runner
        else:
            self.problem = "no marking" if not info else "unknown marking"

    def where(self):
        return "%s:%d (```%s)" % (short(self.page), self.line, self.info)

    def commands(self):
        """The non-empty lines that are not whole-line comments."""
        return [ln for ln in self.body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def fenced(path):
    """Every fenced block of a page, in order."""
    lines = read(path).split("\n")
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^ *(```|~~~)(.*)$", lines[i])  # indented (in a list item) too
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].lstrip().startswith(m.group(1)):
            j += 1
        body = [ln[len(lines[i]) - len(lines[i].lstrip()):] for ln in lines[i + 1:j]]
        out.append(Block(path, i + 1, m.group(2).strip(), "\n".join(body)))
        i = j + 1
    return out


def all_blocks(pages=None):
    return [b for page in (pages or PAGES) for b in fenced(page)]


def of_kind(kind, **opts):
    """Blocks of one kind whose options are exactly opts (True: present)."""
    out = []
    for b in all_blocks():
        if b.kind != kind or b.problem:
            continue
        have = {k for k in b.options if k != "tested-by"}
        if have == set(opts):
            out.append(b)
    return out


def ci_make_targets(root=ROOT):
    """The make targets .ci/run runs as steps."""
    targets = set()
    for line in read(os.path.join(root, CI_SCRIPT)).splitlines():
        m = re.match(r"^step make (.*)$", line.strip())
        if m:
            targets.update(make_targets(shlex.split(m.group(1), comments=True)))
    return targets


def make_targets(args):
    return [a for a in args if "=" not in a and not a.startswith("-")] or ["all"]


def names_a_test(target, root=ROOT):
    """tests/integration/test_x.py::test_name names a test function there."""
    path, sep, name = target.partition("::")
    full = os.path.join(root, path)
    if not sep or not re.match(r"^tests/.*\.py$", path) or not os.path.exists(full):
        return False
    return re.search(r"^(?:async )?def %s\(" % re.escape(name.split("[")[0]), read(full), re.M) is not None


def marking_problems(blocks, root=ROOT):
    """What keeps each block from being run or mapped; [] when all are."""
    bad = []
    ci = None
    for b in blocks:
        if b.problem:
            bad.append("%s: %s" % (b.where(), b.problem))
            continue
        if b.kind == "text":
            cmds = [ln for ln in b.body.splitlines() if LOOKS_LIKE_COMMAND.match(ln)]
            if cmds:
                bad.append("%s: a text block with a command in it: %r" % (b.where(), cmds[0]))
        elif b.kind == "console":
            if not any(ln.startswith("$ ") for ln in b.body.splitlines()):
                bad.append("%s: a console block without a `$ ` command line" % b.where())
        elif b.kind == "sh make-n":
            for ln in b.commands():
                if shlex.split(ln, comments=True)[:1] != ["make"]:
                    bad.append("%s: not a make command: %r" % (b.where(), ln))
        elif b.kind == "sh tested-by":
            targets = b.options["tested-by"].split(",")
            tests = [t for t in targets if t != CI_SCRIPT]
            for t in tests:
                if not names_a_test(t, root):
                    bad.append("%s: no test %s" % (b.where(), t))
            if CI_SCRIPT in targets and not tests:  # CI alone: each line is one of its make steps
                ci = ci_make_targets(root) if ci is None else ci
                for ln in b.commands():
                    args = shlex.split(ln, comments=True)
                    if args[:1] != ["make"] or not set(make_targets(args[1:])) <= ci:
                        bad.append("%s: %s does not run %r" % (b.where(), CI_SCRIPT, ln))
        elif not b.body.strip():
            bad.append("%s: empty" % b.where())
    return bad


def test_every_block_is_run_or_mapped():
    blocks = all_blocks()
    assert len(blocks) >= 25  # the parser finds the pages' blocks
    assert not marking_problems(blocks), "\n".join(marking_problems(blocks))
    # Each kind is exercised by the pages (a runner that finds nothing
    # would pass without running anything).
    assert {"redis-cli", "console", "text", "sh runnable", "sh serves", "sh make-n",
            "sh tested-by"} <= {b.kind for b in blocks}


def test_an_unmarked_or_wrongly_mapped_block_fails(tmp_path):
    """The check itself: a page with a bare block, an unknown marking, a
    mapping to a test that does not exist, a CI mapping of a command CI
    does not run, a command in a text block, a bare block indented in a
    list item and two runner options at once get one problem each."""
    (tmp_path / "tests" / "integration").mkdir(parents=True)
    (tmp_path / "tests" / "integration" / "test_real.py").write_text("def test_here():\n    pass\n")
    (tmp_path / ".ci").mkdir()
    (tmp_path / ".ci" / "run").write_text("step make test\n")
    page = tmp_path / "new.md"
    page.write_text("```\nmake shootout\n```\n"
                    "```sh nearly-runnable\nmake\n```\n"
                    "```sh tested-by=tests/integration/test_real.py::test_gone\nmake x\n```\n"
                    "```sh tested-by=.ci/run\nmake test\nmake test-io-uring\n```\n"
                    "```text\nsrc/redis-like-server --port 1\n```\n"
                    "```sh tested-by=tests/integration/test_real.py::test_here,.ci/run\nmake test\n```\n"
                    "```redis-cli\nPING\n```\n"
                    "- a list item:\n\n  ```\n  make test\n  ```\n"
                    "```sh runnable slow fresh\nredis-cli shutdown\n```\n")
    bad = marking_problems(fenced(str(page)), root=str(tmp_path))
    assert len(bad) == 7, bad
    for line, what in ((1, "no marking"), (4, "unknown marking"), (7, "no test"), (10, "make test-io-uring"),
                       (14, "text block"), (25, "no marking"), (28, "at most")):
        assert any(":%d " % line in b and what in b for b in bad), (line, what, bad)


def makefile_names():
    """The targets of the top-level Makefile and the variables either
    Makefile reads."""
    text = read(os.path.join(ROOT, "Makefile")) + read(os.path.join(ROOT, "src", "Makefile"))
    targets = set()
    for m in re.finditer(r"^([\w%-][\w% .-]*):(?!=)", read(os.path.join(ROOT, "Makefile")), re.M):
        targets.update(m.group(1).split())
    variables = set(re.findall(r"\$\((\w+)\)", text)) | set(re.findall(r"^(\w+)\s*[?:]?=", text, re.M)) \
        | set(re.findall(r"ifeq \(\$\((\w+)\)", text))
    return targets, variables


def test_every_block_names_real_targets_settings_and_files():
    """Blocks that are mapped rather than run are held to the tree too:
    each make target is one of the Makefile's (fuzz-<target> by its
    pattern), each VAR= one a Makefile reads, and each path of ours
    (src/, utils/, tests/, tools/, .ci/) exists."""
    targets, variables = makefile_names()
    bad, seen = [], 0
    for b in all_blocks():
        if b.kind not in ("sh runnable", "sh serves", "sh make-n", "sh tested-by", "console"):
            continue
        lines = [ln[2:] for ln in b.body.splitlines() if ln.startswith("$ ")] if b.kind == "console" \
            else b.commands()
        for ln in lines:
            for cmd in re.split(r"&&|\|\||;|\|", ln.split(" #")[0]):
                args = shlex.split(cmd)
                if args[:1] == ["make"]:
                    seen += 1
                    for t in make_targets(args[1:]):
                        if t not in targets and not (t.startswith("fuzz-") and "fuzz-%" in targets):
                            bad.append("%s: no make target %s" % (b.where(), t))
                    for a in args[1:]:
                        if "=" in a and a.split("=")[0] not in variables:
                            bad.append("%s: the Makefiles read no %s" % (b.where(), a.split("=")[0]))
                for a in args:
                    if re.match(r"^(src|utils|tests|tools|\.ci)/", a) and not glob.glob(os.path.join(ROOT, a)):
                        bad.append("%s: no file %s" % (b.where(), a))
    assert seen >= 20
    assert not bad, bad


def free_range(n):
    """The first of n consecutive free loopback ports."""
    while True:
        base = free_port()
        if base + n >= 65000:
            continue
        ok = True
        for p in range(base + 1, base + n):
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", p))
                except OSError:
                    ok = False
                    break
        if ok:
            return base


def port_map(spec):
    """ports=BASE_PORT:7001+3,22121 -> ({7001: b, 7002: b+1, 7003: b+2,
    22121: c}, {"BASE_PORT": b}): free ports, each range consecutive, and
    the environment variables that carry them to a tool."""
    out, env = {}, {}
    for item in spec.split(","):
        var, first, n = PORTS_ITEM.match(item).groups()
        first, n = int(first), int(n or 1)
        base = free_range(n)
        out.update({first + i: base + i for i in range(n)})
        if var:
            env[var] = str(base)
    return out, env


def substitute(text, ports, tmp):
    """The ports by their free replacements, /tmp by the test's directory."""
    text = re.sub(r"\b\d{4,5}\b", lambda m: str(ports.get(int(m.group(0)), m.group(0))), text)
    return re.sub(r"(?<![\w/])/tmp\b", str(tmp), text)


def prelude(port=None, env=None):
    """bash functions: src/ programs are the build under test; with port,
    redis-cli and the benchmark tool reach that server; env is exported
    (a ports= block's variables, CLUSTER_DIR, RL_SERVER)."""
    q = shlex.quote
    bin_dir = os.path.dirname(SERVER)
    fns = {"src/redis-like-server": q(SERVER)}
    for tool in ("redis-like-benchmark", "redis-like-check-rdb", "redis-like-check-aof"):
        fns["src/" + tool] = q(os.path.join(bin_dir, tool))
    if port:
        fns["src/redis-like-benchmark"] += " -p %d" % port
        fns["redis-cli"] = "redis-cli -p %d" % port
    out = "".join('%s() { command %s "$@"; }\n' % (name, cmd) for name, cmd in fns.items())
    return out + "".join("export %s=%s\n" % (k, q(v)) for k, v in sorted((env or {}).items()))


def clean_env():
    """The environment for a command of a block: no make of ours around it."""
    env = dict(os.environ)
    for var in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):
        env.pop(var, None)
    return env


def run_sh(block, script, cwd=ROOT, timeout=60):
    p = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       env=clean_env())
    assert p.returncode == 0, "%s: block failed (%d):\n%s\n%s%s" % (block.where(), p.returncode, script,
                                                                  p.stdout[-2000:], p.stderr[-2000:])


def test_redis_cli_blocks_run(server):
    ran = 0
    for b in of_kind("redis-cli"):
        c = Conn(server.port)  # a new connection per block, as redis-cli opens
        assert c.err("FLUSHALL") is None
        for line in b.commands():
            e = c.err(*shlex.split(line))
            assert e is None, "%s: `%s` answered %s" % (b.where(), line, e)
            ran += 1
        c.close()
    assert ran >= 20


def test_runnable_blocks_run(server):
    """```sh runnable blocks and the `$ ` lines of ```console blocks, in
    bash -e from the repository root; redis-cli and the benchmark tool
    reach the test's server (its port added)."""
    ran = 0
    for b in of_kind("sh runnable"):
        run_sh(b, prelude(server.port) + b.body)
        ran += 1
    for b in of_kind("console"):
        cmds = "\n".join(ln[2:] for ln in b.body.splitlines() if ln.startswith("$ "))
        run_sh(b, prelude(server.port) + cmds)
        ran += 1
    assert ran >= 5


def test_blocks_with_a_fresh_server_run(start_server):
    """```sh runnable fresh: a server of the block's own (it may stop it)."""
    blocks = of_kind("sh runnable", fresh=True)
    for b in blocks:
        s = start_server()
        run_sh(b, prelude(s.port) + b.body)
    assert blocks


def test_blocks_on_data_files_run(start_server):
    """```sh runnable datadir: run in the directory of a server that wrote
    dump.rdb and a multi-part appendonlydir/ with timestamps, stopped
    first (the check tools read what a server left)."""
    blocks = of_kind("sh runnable", datadir=True)
    for b in blocks:
        s = start_server(args=["--appendonly", "yes", "--aof-timestamp-enabled", "yes"])
        c = s.client()
        c.set("a", "1")
        c.hset("h", mapping={"f": "v"})
        c.save()
        c.rpush("l", "x", "y")
        c.close()
        s.stop()
        run_sh(b, prelude() + b.body, cwd=s.dir)
    assert blocks


def test_serving_blocks_run(tmp_path):
    """```sh serves ports=...: a line naming one of the ports starts a
    server in the foreground (ports replaced by free ones): it must answer
    PING there, then it is stopped; the other lines must exit 0."""
    blocks = of_kind("sh serves", ports=True)
    started = 0
    for b in blocks:
        ports, _ = port_map(b.options["ports"])
        for line in b.commands():
            cmd = substitute(line, ports, tmp_path)
            named = [new for old, new in ports.items() if re.search(r"\b%d\b" % old, line)]
            if not named:
                run_sh(b, prelude() + cmd)
                continue
            log = open(str(tmp_path / "serve.log"), "w+")
            p = subprocess.Popen(["bash", "-c", prelude() + cmd], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                 start_new_session=True, env=clean_env())
            try:
                answered = wait_ping(named[0], p)
            finally:
                os.killpg(p.pid, signal.SIGKILL)  # its own session: the bash and the server it started
                p.wait()
            log.seek(0)
            assert answered, "%s: `%s` did not answer PING on %d:\n%s" % (b.where(), cmd, named[0], log.read()[-2000:])
            log.close()
            started += 1
    assert started >= 2


def wait_ping(port, proc, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        try:
            c = Conn(port)
        except OSError:
            time.sleep(0.05)
            continue
        try:
            return c.err("PING") is None
        finally:
            c.close()
    return False


ALLOCATOR_SWITCHES = {("USE_TCMALLOC", "yes"): "tcmalloc", ("USE_TCMALLOC_MINIMAL", "yes"): "tcmalloc_minimal",
                      ("USE_JEMALLOC", "yes"): "jemalloc", ("USE_JEMALLOC", "no"): "libc",
                      ("USE_EBBMALLOC", "yes"): "ebbmalloc"}
DEFAULT_ALLOCATOR = "ebbmalloc"


def test_make_blocks_build_what_they_say(tmp_path):
    """```sh make-n: each make line as written with -n (print, do not run)
    and its build directory in tmp (the tree's own build is left alone):
    it must succeed, and compile the server for the allocator its switch
    names.  The builds themselves run in CI (`make test-allocators`)."""
    lines = 0
    for b in of_kind("sh make-n"):
        for line in b.commands():
            args = shlex.split(line, comments=True)[1:]
            want = DEFAULT_ALLOCATOR
            for a in args:
                name, _, value = a.partition("=")
                if name == "MALLOC":
                    want = value
            for a in args:  # an explicit USE_* wins over MALLOC
                want = ALLOCATOR_SWITCHES.get(tuple(a.split("=", 1)), want)
            build = tmp_path / ("b%d" % lines)
            p = subprocess.run(["make", "-n"] + args + ["BUILD_DIR=%s" % build], cwd=ROOT, capture_output=True,
                               text=True, timeout=60, env=clean_env())
            assert p.returncode == 0, "%s: `%s` failed:\n%s" % (b.where(), line, p.stderr[-2000:])
            names = set(re.findall(r"RL_MALLOC_NAME='\"([a-z_]+)\"'", p.stdout))
            assert names == {want}, "%s: `%s` builds for %s, not %s" % (b.where(), line, names, want)
            lines += 1
    assert lines >= 5


@pytest.mark.slow
def test_slow_runnable_blocks_run(server):
    """```sh runnable slow: as ```sh runnable, in the slow part."""
    blocks = of_kind("sh runnable", slow=True)
    for b in blocks:
        run_sh(b, prelude(server.port) + b.body, timeout=300)
    assert blocks


def own_server_blocks():
    return [b for b in all_blocks() if b.kind == "sh runnable" and "ports" in b.options and not b.problem]


@pytest.mark.slow
@pytest.mark.parametrize("block", own_server_blocks(), ids=lambda b: "%s:%d" % (short(b.page), b.line))
def test_blocks_that_start_their_own_servers_run(block, tmp_path):
    """```sh runnable ports=...: as written but for the ports (free ones,
    ranges kept consecutive; a VAR: before a port exports VAR=the free one,
    for tools such as utils/tools/cluster-up that read their ports from the
    environment; CLUSTER_DIR and RL_SERVER are exported too) and /tmp (the
    test's own directory); whatever it leaves running is stopped by its pid
    file."""
    ports, env = port_map(block.options["ports"])
    env.update(CLUSTER_DIR=os.path.join(str(tmp_path), "cluster"), RL_SERVER=SERVER)
    try:
        run_sh(block, prelude(env=env) + substitute(block.body, ports, tmp_path))
    finally:
        for pidfile in glob.glob(os.path.join(str(tmp_path), "**", "*.pid"), recursive=True):
            try:
                os.kill(int(open(pidfile).read()), signal.SIGKILL)
            except (ValueError, ProcessLookupError):
                pass
