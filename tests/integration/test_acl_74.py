"""ACL as Redis 7.4.1 answers, against 7.4.1 itself (live from
utils/dev/redis74-ref.sh, else transcripts/acl_74_74.json.gz; ref74.py).

- Every user is created with the sanitize-payload flag (7.2+), so ACL
  GETUSER's flags and ACL LIST, ACL SAVE and CONFIG REWRITE show it
  unless skip-sanitize-payload replaced it.
- A key spec that finds no key in the arguments makes the whole command
  name none (Redis's getKeysUsingKeySpecs): "PFMERGE k" (no source keys)
  names no key, so a user without key patterns may run it and ACL DRYRUN
  allows it (7.0 and 7.4 alike), while "PFMERGE k k2" checks both keys.

- ACL GETUSER and ACL LIST print a selector's command rules as they were
  written (7.2+): "+@all" or "-@all", then the rules in order, a rule
  dropped when a later one overrides it (the same command, category or a
  subcommand of it), names lower-cased; 7.0 printed a computed list.

7.4's NOPERM, script and DRYRUN texts ("User <name> has no permissions
...", "No permissions to access a key") are test_acl_texts_74.py's."""
import pytest
import redis

from ref74 import Ref74

pytestmark = pytest.mark.differential

FLAGS = [
    ["ACL", "SETUSER", "u1", "on", "nopass", "+@all"], ["ACL", "GETUSER", "u1"],
    ["ACL", "SETUSER", "u2"], ["ACL", "GETUSER", "u2"],
    ["ACL", "SETUSER", "u3", "on", "nopass", "skip-sanitize-payload", "+get"], ["ACL", "GETUSER", "u3"],
    ["ACL", "SETUSER", "u3", "sanitize-payload"], ["ACL", "GETUSER", "u3"],
    ["ACL", "SETUSER", "u3", "skip-sanitize-payload"], ["ACL", "SETUSER", "u3", "reset"], ["ACL", "GETUSER", "u3"],
    ["ACL", "SETUSER", "u4", "on", ">pw", "~k*", "(+get ~x*)"], ["ACL", "GETUSER", "u4"],
    ["ACL", "GETUSER", "default"], ["ACL", "LIST"],
]

# Rules in the orders users write them: overrides, subcommands, first
# arguments, categories in capitals, resets, root and extra selectors.
RULES = [
    ["r1", "on", "nopass", "-@all", "+get", "+SET", "-@string", "+@string", "-get", "+config|get", "+CONFIG",
     "-config|set"],
    ["r2", "+@all", "-debug", "+debug|digest", "-@dangerous", "+select|0", "+select", "-flushall"],
    ["r3", "+@hash", "-hset", "allcommands", "-get"],
    ["r4", "nocommands", "+@read", "-@write", "+@READ", "+client|id", "-client"],
    ["r5", "-@all", "+select|0", "+select|1", "+get", "+get", "-@all", "+set", "+@list", "-lpush", "+@all"],
    ["r6", "on", "nopass", "+get", "(+set -@all +@hash ~h*)", "(%R~r* +@read -hgetall +hgetall)"],
    ["r7", "+acl|whoami", "+acl", "-acl|setuser", "+@keyspace", "-del", "+@KEYSPACE"],
    ["r8", "+get", "reset", "+set"],
]


def run_rules(c):
    c.response_callbacks.clear()
    out = []
    for rule in RULES:
        out.append(c.execute_command("ACL", "SETUSER", *rule))
        out.append(c.execute_command("ACL", "GETUSER", rule[0]))
    out.append(c.execute_command("ACL", "LIST"))
    return out


# (command, allowed?) run as ACL DRYRUN of a user with every command and no
# key pattern, then for real by a client logged in as that user.
NOKEYS_CMDS = [
    ["PFMERGE", "k"], ["PFMERGE", "k", "k2"], ["PFCOUNT", "k"], ["PFADD", "k", "a"], ["GET", "k"],
    ["EVAL", "return 1", "0"], ["EVAL", "return 1", "1", "k"], ["LMPOP", "1", "a", "LEFT"],
    ["ZUNIONSTORE", "d", "1", "a"], ["SUNIONSTORE", "d", "a"], ["XREAD", "STREAMS", "a", "0"],
    ["GETKEYS", "PFMERGE", "k"], ["GETKEYS", "PFMERGE", "k", "k2"],
]


def run_flags(c):
    c.response_callbacks.clear()
    out = []
    for cmd in FLAGS:
        try:
            out.append(c.execute_command(*cmd))
        except redis.ResponseError as e:
            out.append({"err": str(e)})
    return out


def allowed(reply):
    return reply in (b"OK", "OK")


def run_nokeys(c, port):
    """What the no-key user may do: DRYRUN's verdict and the real run's
    (allowed, or the kind of NOPERM); COMMAND GETKEYS's reply as is."""
    c.response_callbacks.clear()
    c.execute_command("ACL", "SETUSER", "nokeys", "on", ">pw", "+@all", "resetkeys")
    c.flushall()
    u = redis.Redis(port=port, username="nokeys", password="pw")
    u.response_callbacks.clear()
    out = []
    try:
        for cmd in NOKEYS_CMDS:
            if cmd[0] == "GETKEYS":
                try:
                    out.append(c.execute_command("COMMAND", "GETKEYS", *cmd[1:]))
                except redis.ResponseError as e:
                    out.append({"err": str(e)})
                continue
            dry = c.execute_command("ACL", "DRYRUN", "nokeys", *cmd)
            try:
                u.execute_command(*cmd)
                real = "ran"
            except redis.exceptions.NoPermissionError as e:
                real = "NOPERM key" if "key" in str(e) else "NOPERM"
            except redis.ResponseError:
                real = "ran"  # passed the ACL check, failed on its own
            out.append([cmd[0], allowed(dry), real])
    finally:
        u.close()
    return out


@pytest.fixture(scope="module")
def ref():
    r = Ref74("acl_74")
    yield r
    r.stop()


def reset_users(c):
    for name in c.execute_command("ACL", "USERS"):
        name = name.decode() if isinstance(name, bytes) else name
        if name != "default":
            c.execute_command("ACL", "DELUSER", name)


def test_sanitize_payload_flag_is_74s(server, ref):
    c = server.client(decode_responses=False)
    reset_users(c)
    ours = run_flags(c)

    def live():
        r = redis.Redis(port=ref.port)
        reset_users(r)
        return run_flags(r)
    assert ours == ref.reply(["flags"], live)
    assert b"sanitize-payload" in ours[1][1]  # u1's flags


def test_no_key_commands_are_74s(server, ref):
    c = server.client(decode_responses=False)
    reset_users(c)
    ours = run_nokeys(c, server.port)

    def live():
        r = redis.Redis(port=ref.port)
        reset_users(r)
        return run_nokeys(r, ref.port)
    assert ours == ref.reply(["nokeys"], live)
    assert ours[0] == ["PFMERGE", True, "ran"]
    assert ours[1] == ["PFMERGE", False, "NOPERM key"]


def test_rules_print_as_written(server, ref):
    c = server.client(decode_responses=False)
    reset_users(c)
    ours = run_rules(c)

    def live():
        r = redis.Redis(port=ref.port)
        reset_users(r)
        return run_rules(r)
    assert ours == ref.reply(["rules"], live)
    listed = ours[-1]
    assert (b"user r1 on nopass sanitize-payload resetchannels -@all +set +@string -get +config -config|set"
            in listed)
    # and each line loads back to the same rights and the same text
    for line in listed:
        words = line.decode().split(" ")
        if words[1] == "default":
            continue
        c.execute_command("ACL", "DELUSER", words[1])
        c.execute_command("ACL", "SETUSER", *words[1:])
    assert c.execute_command("ACL", "LIST") == listed


def test_acl_save_and_rewrite_show_the_flag(start_server, tmp_path):
    acl = tmp_path / "users.acl"
    acl.write_text("user default on nopass ~* &* +@all\n")
    s = start_server(args=["--aclfile", str(acl)])
    r = s.client()
    r.execute_command("ACL", "SETUSER", "a", "on", ">pw", "~a*", "+get")
    r.execute_command("ACL", "SETUSER", "b", "on", "nopass", "skip-sanitize-payload", "+get")
    assert r.execute_command("ACL", "SAVE") == "OK"
    lines = acl.read_text().splitlines()
    assert "user default on nopass sanitize-payload ~* &* +@all" in lines
    assert any(line.startswith("user a on sanitize-payload #") for line in lines)
    assert any(line.startswith("user b on nopass skip-sanitize-payload ") for line in lines)
    # and a file holding them loads back to the same users
    assert r.execute_command("ACL", "LOAD") == "OK"
    assert r.execute_command("ACL", "SAVE") == "OK"
    assert acl.read_text().splitlines() == lines
