"""COMMAND COUNT and COMMAND LIST against Debian's redis-server 7.0.15: the
commands Redis has and redis-like lacks must be exactly those of the
open omissions listed in ABSENT (none today: cluster mode came with issue 45); nothing else, and nothing Redis
lacks but the extensions listed in EXTENSIONS.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_command_coverage.py"""
import pytest

pytestmark = pytest.mark.differential

ABSENT = {}


# Subcommands Redis 7.0 does not have but we answer (MEMORY ALLOCATOR-ADVICE
# and SIZES of issue 21, CLIENT SETINFO of 7.2) are left out of COMMAND
# LIST/INFO (cmd_meta_listed), so tools see Redis 7.0's table; MEMORY HELP
# lists them.  Nothing else may differ.
# Commands newer than Redis 7.0 (issue 47): Redis 7.4's hash field expiry
# and Redis 8.0's HGETDEL/HGETEX/HSETEX (test_hash_ttl_74.py covers them).
EXTENSIONS = set("hexpire hpexpire hexpireat hpexpireat httl hpttl hexpiretime hpexpiretime hpersist "
                 "hgetdel hgetex hsetex".split())


def absent():
    names = set()
    for group in ABSENT.values():
        names |= set(group.split())
    return names


def test_command_list_differs_only_by_open_issues(server, redis_ref):
    ours, ref = server.client(), redis_ref.client()
    mine = set(ours.execute_command("COMMAND LIST"))
    theirs = set(ref.execute_command("COMMAND LIST"))
    assert theirs - mine == absent()
    assert mine - theirs == EXTENSIONS
    assert ours.execute_command("MEMORY", "SIZES") is not None   # answered though not listed
    top_absent = {n for n in absent() if "|" not in n}
    assert ref.execute_command("COMMAND COUNT") - ours.execute_command("COMMAND COUNT") == \
        len(top_absent) - len(EXTENSIONS)
    assert ours.execute_command("COMMAND COUNT") == len({n for n in mine if "|" not in n})
