"""COMMAND COUNT and COMMAND LIST against Debian's redis-server 7.0.15: the
commands Redis has and redis-like lacks must be exactly those that
docs/compatibility.md lists under "Commands Redis 7.0.15 has that
redis-like lacks", and the commands only redis-like has exactly those under
"Commands redis-like has that Redis 7.0.15 lacks": the page users read is
the list the test holds the server to (a list of one item, "none", when
nothing lacks).  Against Redis 7.4.1 (live or its transcript, ref74.py):
the same commands lack, and only Redis 8.0's three hash commands are ours
alone.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_command_coverage.py"""
import os
import re

import pytest

from ref74 import Ref74

pytestmark = pytest.mark.differential

COMPAT = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "compatibility.md")
LACKS = "Commands Redis 7.0.15 has that redis-like lacks"
HAS = "Commands redis-like has that Redis 7.0.15 lacks"


def documented(heading):
    """The commands named in backticks in the section `heading` of
    docs/compatibility.md, as COMMAND LIST spells them ("cluster|info")."""
    with open(COMPAT) as f:
        text = f.read()
    m = re.search(r"^## " + re.escape(heading) + r"\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, "docs/compatibility.md has no section '%s'" % heading
    # The list is the section's first bulleted list; the prose around it
    # (how a client is answered, subcommands answered but not listed) is not.
    names, in_list = set(), False
    for line in m.group(1).splitlines():
        if line.startswith("- "):
            in_list = True
        elif in_list and not line.startswith("  "):
            break
        if in_list:
            names |= {"|".join(s.lower().split()) for s in re.findall(r"`([A-Z][A-Z0-9 _-]*)`", line)}
        if in_list and line.startswith("- none"):
            return set()
    assert names, "no commands listed under '%s'" % heading
    return names


def absent():
    return documented(LACKS)


def test_command_list_differs_only_by_open_issues(server, redis_ref):
    ours, ref = server.client(), redis_ref.client()
    mine = set(ours.execute_command("COMMAND LIST"))
    theirs = set(ref.execute_command("COMMAND LIST"))
    assert theirs - mine == absent()
    assert mine - theirs == documented(HAS)
    assert ours.execute_command("MEMORY", "SIZES") is not None   # answered though not listed
    top_absent = {n for n in absent() if "|" not in n}
    assert ref.execute_command("COMMAND COUNT") - ours.execute_command("COMMAND COUNT") == \
        len(top_absent) - len({n for n in documented(HAS) if "|" not in n})
    assert ours.execute_command("COMMAND COUNT") == len({n for n in mine if "|" not in n})


# Against 7.4.1: its one new name we lack is a cluster one; Redis 8.0's
# HGETDEL/HGETEX/HSETEX are newer than 7.4.1 (test_hash_ttl_74.py).
ABSENT_74 = set()
EXTENSIONS_74 = {"hgetdel", "hgetex", "hsetex"}


def test_command_list_differs_from_74_only_by_cluster(server):
    ours = server.client()
    ref = Ref74("command_coverage")
    try:
        mine = set(ours.execute_command("COMMAND LIST"))
        theirs = set(ref.reply(["COMMAND LIST"], lambda: ref.server.client().execute_command("COMMAND LIST")))
        assert theirs - mine == absent() | ABSENT_74
        assert mine - theirs == EXTENSIONS_74
        count = ref.reply(["COMMAND COUNT"], lambda: ref.server.client().execute_command("COMMAND COUNT"))
        top_absent = {n for n in absent() if "|" not in n}
        assert count - ours.execute_command("COMMAND COUNT") == len(top_absent) - len(EXTENSIONS_74)
    finally:
        ref.stop()
