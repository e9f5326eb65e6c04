"""COMMAND COUNT and COMMAND LIST against Debian's redis-server 7.0.15 and
against Redis 7.4.1 (live or its transcript, ref74.py): the commands Redis
has and redis-like lacks must be exactly those of the deliberate omission
(cluster); nothing else, and nothing Redis lacks but the newer commands
listed in EXTENSIONS (against 7.0) and EXTENSIONS_74 (against 7.4.1).

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_command_coverage.py"""
import pytest

from ref74 import Ref74

pytestmark = pytest.mark.differential

ABSENT = {
    "cluster (not planned)": "asking readonly readwrite cluster cluster|addslots cluster|addslotsrange "
                             "cluster|bumpepoch cluster|count-failure-reports cluster|countkeysinslot "
                             "cluster|delslots cluster|delslotsrange cluster|failover cluster|flushslots "
                             "cluster|forget cluster|getkeysinslot cluster|help cluster|info cluster|keyslot "
                             "cluster|links cluster|meet cluster|myid cluster|nodes cluster|replicas "
                             "cluster|replicate cluster|reset cluster|saveconfig cluster|set-config-epoch "
                             "cluster|setslot cluster|shards cluster|slaves cluster|slots",
}


# Subcommands no Redis has but we answer (MEMORY ALLOCATOR-ADVICE and SIZES
# of issue 21) are left out of COMMAND LIST/INFO (cmd_meta_listed); MEMORY
# HELP lists them.  Nothing else may differ.
# Redis 8.0's HGETDEL/HGETEX/HSETEX: newer than 7.4.1 (test_hash_ttl_74.py).
EXTENSIONS_74 = set("hgetdel hgetex hsetex".split())
# Commands newer than Redis 7.0 (issue 47): 7.2's WAITAOF, CLIENT NO-TOUCH
# and SETINFO, 7.4's hash field expiry, and 8.0's three.
EXTENSIONS = set("waitaof client|no-touch client|setinfo hexpire hpexpire hexpireat hpexpireat httl hpttl "
                 "hexpiretime hpexpiretime hpersist".split()) | EXTENSIONS_74
# 7.4's only new name we lack is a cluster one.
ABSENT_74 = {"cluster|myshardid"}


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
        len(top_absent) - len({n for n in EXTENSIONS if "|" not in n})
    assert ours.execute_command("COMMAND COUNT") == len({n for n in mine if "|" not in n})


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
