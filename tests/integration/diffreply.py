"""One command on our server and on Redis, replies compared as data.

The differential tests that drive both servers with redis-py (rather than
raw transcripts, see scripted.py) need the same thing at every step: a
reply, or the error in its place, so that an error on one side and a reply
on the other compare unequal instead of raising.
"""
import redis


def reply_or_error(c, cmd):
    """c's reply to cmd, or ("error", message) when it answers an error."""
    try:
        return c.execute_command(*cmd)
    except redis.ResponseError as e:
        return ("error", str(e))


def both(ours, ref, cmd):
    """[our reply, Redis's reply] to cmd, errors as reply_or_error gives them."""
    return [reply_or_error(c, cmd) for c in (ours, ref)]


def run_script(c, script):
    """Replies to each command of script; an error keeps only its code
    (the first word), for scripts whose error texts may differ in detail.
    OBJECT goes through redis-py's helper, whose reply parser wants the
    subcommand."""
    out = []
    for cmd in script:
        try:
            if cmd[0] == "OBJECT":
                out.append(c.object(cmd[1].lower(), cmd[2]))
            else:
                out.append(c.execute_command(*cmd))
        except redis.ResponseError as e:
            out.append(("ERR", str(e).split(" ")[0]))
    return out
