"""compat74.py: the reply texts Redis 7.4 changed from 7.0, for the
differential tests that still compare us with Debian's Redis 7.0.15.

We answer as 7.4.1 does (issue 47).  A 7.0.15 reply that holds one of the
texts below is turned into 7.4.1's before the comparison; nothing else is
forgiven.  test_r74_surface.py checks the HELP line, and
test_acl_texts_74.py the ACL denials (Acl74Conn on 7.0.15 gives 7.4.1's
bytes), against Redis 7.4.1 itself (live or its transcript), so this list
cannot drift from 7.4."""

# 7.0's text -> 7.4's, as the bytes of a simple string line.
CHANGED = [
    (b"    Prints this help.", b"    Print this help."),  # every HELP's last line
]


def as74(x):
    """x (bytes, str, or tuples/lists of them, raw RESP included) with 7.0's
    changed texts replaced by 7.4's."""
    if isinstance(x, bytes):
        for old, new in CHANGED:
            x = x.replace(old, new)
        return x
    if isinstance(x, str):
        for old, new in CHANGED:
            x = x.replace(old.decode(), new.decode())
        return x
    if isinstance(x, tuple):
        return tuple(as74(y) for y in x)
    if isinstance(x, list):
        return [as74(y) for y in x]
    return x


# ACL: since 7.2 every user is created with the sanitize-payload flag (7.0:
# only "reset" set it), so 7.4 shows it in ACL GETUSER's flags and in ACL
# LIST's "user ..." lines wherever neither sanitize flag was given.
SANITIZE = (b"sanitize-payload", b"skip-sanitize-payload")
_FLAG_WORDS = (b"on", b"off", b"nopass") + SANITIZE


def acl_line_as74(line):
    """One ACL LIST line (bytes) as 7.4 prints it."""
    words = line.split(b" ")
    if len(words) < 2 or words[0] != b"user":
        return line
    i = 2
    while i < len(words) and words[i] in _FLAG_WORDS:
        i += 1
    if any(w in SANITIZE for w in words[2:i]):
        return line
    return b" ".join(words[:i] + [b"sanitize-payload"] + words[i:])


def acl_value_as74(v):
    """A parsed ACL GETUSER or ACL LIST reply (texts as bytes) as 7.4's."""
    if isinstance(v, list):
        out = [acl_value_as74(x) for x in v]
        for i in range(len(out) - 1):
            if out[i] == b"flags" and isinstance(out[i + 1], list) and not any(f in SANITIZE for f in out[i + 1]):
                out[i + 1] = out[i + 1] + [b"sanitize-payload"]
        return out
    if isinstance(v, bytes) and v.startswith(b"user "):
        return acl_line_as74(v)
    return v


def _bulk_at(raw, p):
    """(data, end) of the bulk string whose '$' is at p."""
    e = raw.index(b"\r\n", p)
    n = int(raw[p + 1:e])
    return raw[e + 2:e + 2 + n], e + 2 + n + 2


def acl_raw_as74(raw):
    """The exact bytes of an ACL GETUSER or ACL LIST reply as 7.4's."""
    key = b"$5\r\nflags\r\n"
    i = raw.find(key)
    if i >= 0:
        j = i + len(key)
        e = raw.index(b"\r\n", j)
        kind, n, p = raw[j:j + 1], int(raw[j + 1:e]), e + 2
        items = []
        for _ in range(n):
            data, p = _bulk_at(raw, p)
            items.append(data)
        if not any(f in SANITIZE for f in items):
            raw = raw[:j] + kind + b"%d\r\n" % (n + 1) + raw[e + 2:p] + b"$16\r\nsanitize-payload\r\n" + raw[p:]
    out, p = b"", 0
    while True:
        q = raw.find(b"\r\nuser ", p)
        if q < 0:
            return out + raw[p:]
        start = raw.rfind(b"$", p, q)
        if start < 0 or not raw[start + 1:q].isdigit():
            out, p = out + raw[p:q + 2], q + 2
            continue
        data, end = _bulk_at(raw, start)
        new = acl_line_as74(data)
        out += raw[p:start] + b"$%d\r\n%s\r\n" % (len(new), new)
        p = end


# ACL denials: 7.2 reworded them (one text for replies, scripts and ACL
# DRYRUN).  7.0's -> 7.4's, where 7.4's needs no more than the texts hold.
DENIALS = [
    (b"NOPERM this user has no permissions to access one of the keys used as arguments",
     b"NOPERM No permissions to access a key"),
    (b"NOPERM this user has no permissions to access one of the channels used as arguments",
     b"NOPERM No permissions to access a channel"),
    (b"The user executing the script can't access at least one of the keys mentioned in the command arguments",
     b"ACL failure in script: No permissions to access a key"),
    (b"The user executing the script can't publish to the channel mentioned in the command",
     b"ACL failure in script: No permissions to access a channel"),
]
# These two name the user (7.4) and, in a script, the command it refused,
# which 7.0's text leaves out.
NOPERM_CMD_70 = b"NOPERM this user has no permissions to run the '"
SCRIPT_CMD_70 = b"The user executing the script can't run this command or subcommand"
DRYRUN_70 = b"This user has no permissions to "


def denial_as74(text, user, script_cmd=None):
    """An error text (bytes) with 7.0's ACL denials as 7.4 words them: user
    is the client's user; script_cmd the command a script was refused
    (needed only for SCRIPT_CMD_70)."""
    for old, new in DENIALS:
        text = text.replace(old, new)
    text = text.replace(NOPERM_CMD_70, b"NOPERM User " + user + b" has no permissions to run the '")
    if SCRIPT_CMD_70 in text:
        assert script_cmd is not None, text
        text = text.replace(SCRIPT_CMD_70, b"ACL failure in script: User %s has no permissions to run the '%s' command"
                            % (user, script_cmd))
    return text


def dryrun_as74(text, user):
    """ACL DRYRUN's denial (bytes) of user as 7.4's: "User <name> has ..."."""
    if text.startswith(DRYRUN_70):
        return b"User " + user + b" has no permissions to " + text[len(DRYRUN_70):]
    return text


def _errors_as74(v, f):
    """A parsed reply with f applied to every error's text."""
    if isinstance(v, tuple) and len(v) == 2 and v[0] == "err":
        return ("err", f(v[1]) if isinstance(v[1], bytes) else f(v[1].encode()).decode())
    if isinstance(v, list):
        return [_errors_as74(x, f) for x in v]
    if isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], list):
        return (v[0], _errors_as74(v[1], f))
    return v


def _error_lines_as74(raw, f):
    """The exact bytes of a reply with f applied to every error line."""
    out = []
    p = 0
    while p < len(raw):
        e = raw.index(b"\r\n", p)
        line = raw[p:e]
        if line[:1] == b"$" or line[:1] == b"=" or line[:1] == b"!":
            n = int(line[1:])
            if n >= 0:
                end = e + 2 + n + 2
                if line[:1] == b"!":  # RESP3 blob error
                    body = f(raw[e + 2:end - 2])
                    out.append(b"!%d\r\n%s\r\n" % (len(body), body))
                else:
                    out.append(raw[p:end])
                p = end
                continue
        out.append(b"-" + f(line[1:]) + b"\r\n" if line[:1] == b"-" else raw[p:e + 2])
        p = e + 2
    return b"".join(out)


class Acl74Conn:
    """An ExactConn to Redis 7.0.15 whose replies come back as 7.4 gives
    them where ACL changed: ACL GETUSER and ACL LIST with the
    sanitize-payload flag above, and the denial texts (NOPERM, scripts' and
    ACL DRYRUN's).  It follows AUTH, HELLO AUTH and RESET for the user
    7.4's texts name; a script's refused command comes from the 7.0
    server's ACL LOG (a default-user connection of its own)."""

    def __init__(self, conn):
        self.conn = conn
        self.user = b"default"
        self.admin = None

    def _script_cmd(self):
        if self.admin is None:
            self.admin = type(self.conn)(self.conn.sock.getpeername()[1])
        entry = self.admin.call("ACL", "LOG", "1")[1][0]
        fields = dict(zip(entry[0::2], entry[1::2]))
        assert fields[b"context"] == b"lua" and fields[b"reason"] == b"command", fields
        return fields[b"object"]

    def _follow_auth(self, words, args, value):
        if isinstance(value, tuple) and value[:1] == ("err",):
            return
        if words[:1] == ["RESET"]:
            self.user = b"default"
        elif words[:1] == ["AUTH"] and len(args) in (2, 3) and value == b"OK":
            self.user = b"default" if len(args) == 2 else _b(args[1])
        elif words[:1] == ["HELLO"]:
            for i in range(2, len(args) - 2):
                if _b(args[i]).upper() == b"AUTH":
                    self.user = _b(args[i + 1])
                    break

    def call(self, *args):
        raw, value = self.conn.call(*args)
        words = [_b(a).decode("latin-1").upper() for a in args[:2]]
        self._follow_auth(words, args, value)
        if words in (["ACL", "GETUSER"], ["ACL", "LIST"]):
            return acl_raw_as74(raw), acl_value_as74(value)
        if words == ["ACL", "DRYRUN"] and raw.startswith(b"$") and len(args) > 2:
            text = dryrun_as74(value, _b(args[2]))
            return b"$%d\r\n%s\r\n" % (len(text), text), text
        if b"-" not in raw and b"!" not in raw:
            return raw, value
        script_cmd = []

        def f(text):
            if SCRIPT_CMD_70 in text and not script_cmd:
                script_cmd.append(self._script_cmd())
            return denial_as74(text, self.user, script_cmd[0] if script_cmd else None)
        return _error_lines_as74(raw, f), _errors_as74(value, f)

    def close(self):
        if self.admin is not None:
            self.admin.close()
        self.conn.close()

    def __getattr__(self, name):
        return getattr(self.conn, name)


def _b(a):
    return a if isinstance(a, bytes) else str(a).encode()

    def __getattr__(self, name):
        return getattr(self.conn, name)
