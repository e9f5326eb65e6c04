"""ACL denial texts as Redis 7.4.1 gives them (7.2 reworded them), against
7.4.1 itself (live from utils/dev/redis74-ref.sh, else
transcripts/acl_texts_74.json.gz; ref74.py):

- NOPERM replies: "User <name> has no permissions to run the '<cmd>'
  command" (subcommands as '<cmd>|<sub>'), "No permissions to access a
  key", "No permissions to access a channel"; inside MULTI (the EXEC that
  follows is aborted) and for FCALL's own keys alike.
- Scripts (redis.call raises, redis.pcall returns): "ERR ACL failure in
  script: " and the same texts.
- ACL DRYRUN: "User <name> has no permissions to run the '<cmd>' command",
  "... to access the '<key>' key" / "... the '<channel>' channel".
- EXEC after the rules changed keeps 7.0's "ACLs rules changed ..." texts.
- The ACL LOG entries' count, reason, context, object and username.

Each reply is compared byte for byte.  The same scenario against Debian's
7.0.15 through compat74.Acl74Conn must give 7.4.1's bytes too: that checks
the 7.0 -> 7.4 mapping the older differential tests rely on."""
import pytest

from compat74 import Acl74Conn
from rawresp import ExactConn
from ref74 import Ref74

pytestmark = pytest.mark.differential

LIB = ("#!lua name=texts\n"
       "redis.register_function('getk', function(k, a) return redis.call('get', k[1]) end)\n"
       "redis.register_function('getx', function(k, a) return redis.call('get', 'x') end)\n"
       "redis.register_function('pflush', function(k, a) return redis.pcall('flushall') end)\n"
       "redis.register_function('cflush', function(k, a) return redis.call('flushall') end)\n"
       "redis.register_function('ppub', function(k, a) return redis.pcall('publish', 'x', 'm') end)")

RULES = ["resetkeys", "~k*", "resetchannels", "&ch*", "+@all", "-config|set", "-flushall", "-select", "+select|0",
         "-debug"]
SETUP = [
    ["ACL", "SETUSER", "u", "on", ">p", *RULES],
    ["ACL", "SETUSER", "app:1", "on", ">p", "resetkeys", "resetchannels", "-@all", "+get", "+publish"],
    ["FUNCTION", "LOAD", LIB],
]

# Run by user "u" unless the first word names another connection.
AS_U = [
    # top level: command, subcommand, first-arg rule, key, channel
    ["FLUSHALL"], ["CONFIG", "SET", "maxmemory", "0"], ["CONFIG", "GET", "maxmemory"], ["SELECT", "1"],
    ["SELECT", "0"], ["GET", "x"], ["GET", "k1"], ["MSET", "k1", "a", "x", "b"], ["PUBLISH", "x", "m"],
    ["PUBLISH", "ch1", "m"], ["SUBSCRIBE", "ch1", "x"], ["PSUBSCRIBE", "ch*"], ["PSUBSCRIBE", "x*"],
    ["SPUBLISH", "x", "m"], ["PING"], ["DBSIZE"],
    # scripts: redis.call raises, redis.pcall returns the error
    ["EVAL", "return redis.call('get', 'x')", "0"], ["EVAL", "return redis.pcall('get', 'x')", "0"],
    ["EVAL", "return redis.call('get', KEYS[1])", "1", "x"], ["EVAL", "return redis.call('get', 'x')", "1", "k1"],
    ["EVAL", "return redis.call('flushall')", "0"], ["EVAL", "return redis.pcall('flushall')", "0"],
    ["EVAL", "return redis.call('config', 'get', 'maxmemory')", "0"],
    ["EVAL", "return redis.pcall('select', '3')", "0"],
    ["EVAL", "return redis.call('publish', 'x', 'm')", "0"], ["EVAL", "return redis.pcall('publish', 'x', 'm')", "0"],
    ["EVAL", "local ok, e = pcall(redis.call, 'get', 'x') return e.err", "0"],
    ["FCALL", "getk", "1", "x"], ["FCALL", "getx", "1", "k1"], ["FCALL", "pflush", "0"], ["FCALL", "cflush", "0"],
    ["FCALL", "ppub", "0"], ["FCALL_RO", "getk", "1", "x"],
    # MULTI: a refused command aborts the EXEC
    ["MULTI"], ["GET", "x"], ["FLUSHALL"], ["PUBLISH", "x", "m"], ["GET", "k1"], ["EXEC"],
    # EXEC after the rules changed under the queued commands
    ["MULTI"], ["GET", "k1"], ["PUBLISH", "ch1", "m"], ["CONFIG", "GET", "maxmemory"], ["EVAL", "return 1", "0"],
    ["admin", "ACL", "SETUSER", "u", "resetkeys", "~z*", "resetchannels", "-config", "-eval"], ["EXEC"],
    ["admin", "ACL", "SETUSER", "u", *RULES],
    # another user (its name printed as is), and the default user
    ["app", "SET", "x", "1"], ["app", "GET", "x"], ["app", "PUBLISH", "x", "m"],
    ["app", "EVAL", "return 1", "0"],
    ["admin", "ACL", "SETUSER", "default", "-flushdb"], ["admin", "FLUSHDB"],
    ["admin", "EVAL", "return redis.pcall('flushdb')", "0"],
    ["admin", "ACL", "SETUSER", "default", "+@all"],
]

DRYRUN = [
    ["u", "flushall"], ["u", "config", "set", "maxmemory", "0"], ["u", "config", "get", "x"], ["u", "select", "1"],
    ["u", "select", "0"], ["u", "get", "x"], ["u", "get", "k1"], ["u", "mset", "k1", "a", "x", "b"],
    ["u", "publish", "x", "m"], ["u", "subscribe", "ch1", "x"], ["u", "psubscribe", "x*"], ["u", "eval", "", "1", "x"],
    ["u", "fcall", "getk", "1", "x"], ["app:1", "set", "x", "1"], ["app:1", "get", "x"],
    ["app:1", "publish", "x", "m"], ["app:1", "client", "kill", "id", "1"], ["default", "get", "x"],
]

LOG_FIELDS = (b"count", b"reason", b"context", b"object", b"username")


def run(port, wrap=lambda c: c):
    """The scenario's replies (exact bytes) on the server at port."""
    conns = {name: wrap(ExactConn(port)) for name in ("admin", "u", "app")}
    admin = conns["admin"]
    try:
        for cmd in (["FLUSHALL"], ["FUNCTION", "FLUSH"], ["SCRIPT", "FLUSH"], ["ACL", "DELUSER", "u", "app:1"]):
            admin.call(*cmd)
        out = [admin.call(*cmd)[0] for cmd in SETUP]
        out.append(conns["u"].call("AUTH", "u", "p")[0])
        out.append(conns["app"].call("AUTH", "app:1", "p")[0])
        admin.call("ACL", "LOG", "RESET")
        for cmd in AS_U:
            conn = conns[cmd[0]] if cmd[0] in conns else conns["u"]
            args = cmd[1:] if cmd[0] in conns else cmd
            out.append(conn.call(*args)[0])
            if args[0] in ("SUBSCRIBE", "PSUBSCRIBE") and out[-1].startswith(b"*"):
                conn.call("RESET")  # leave the subscribed state (and stay u)
                conn.call("AUTH", "u", "p")
        out += [admin.call("ACL", "DRYRUN", *cmd)[0] for cmd in DRYRUN]
        for entry in admin.call("ACL", "LOG", "100")[1]:
            fields = dict(zip(entry[0::2], entry[1::2]))
            out.append(repr([fields[k] for k in LOG_FIELDS]).encode())
        return out
    finally:
        for c in conns.values():
            c.close()


@pytest.fixture(scope="module")
def ref():
    r = Ref74("acl_texts")
    yield r
    r.stop()


def check(ours, theirs):
    assert len(ours) == len(theirs)
    for i, (o, t) in enumerate(zip(ours, theirs)):
        assert o == t, (i, o[:300], t[:300])


def test_denial_texts_are_74s(server, ref):
    ours = run(server.port)
    check(ours, ref.reply(["scenario"], lambda: run(ref.port)))
    # the scenario reaches each text (a changed scenario cannot lose them)
    texts = b"\n".join(ours)
    for t in (b"-NOPERM User u has no permissions to run the 'flushall' command",
              b"-NOPERM User u has no permissions to run the 'config|set' command",
              b"-NOPERM User u has no permissions to run the 'select' command",
              b"-NOPERM User app:1 has no permissions to run the 'set' command",
              b"-NOPERM User default has no permissions to run the 'flushdb' command",
              b"-NOPERM No permissions to access a key", b"-NOPERM No permissions to access a channel",
              b"-ERR ACL failure in script: No permissions to access a key script: ",
              b"-ERR ACL failure in script: No permissions to access a channel\r\n",
              b"-ERR ACL failure in script: User u has no permissions to run the 'flushall' command script: ",
              b"-ERR ACL failure in script: User u has no permissions to run the 'flushall' command\r\n",
              b"-EXECABORT Transaction discarded because of previous errors.",
              b"This command is no longer allowed for the following reason: no permission to touch",
              b"User u has no permissions to run the 'config|set' command\r\n",
              b"User u has no permissions to access the 'x' key\r\n",
              b"User u has no permissions to access the 'x' channel\r\n",
              b"User app:1 has no permissions to run the 'client|kill' command\r\n"):
        assert t in texts, t


def test_70_texts_map_to_74s(redis_ref, ref):
    """compat74.Acl74Conn turns Redis 7.0.15's texts into 7.4.1's."""
    theirs = run(redis_ref.port, Acl74Conn)
    check(theirs, ref.reply(["scenario"], lambda: run(ref.port)))
