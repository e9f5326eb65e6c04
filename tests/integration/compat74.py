"""compat74.py: the reply texts Redis 7.4 changed from 7.0, for the
differential tests that still compare us with Debian's Redis 7.0.15.

We answer as 7.4.1 does (issue 47).  A 7.0.15 reply that holds one of the
texts below is turned into 7.4.1's before the comparison; nothing else is
forgiven.  test_r74_texts.py checks each of these texts against Redis 7.4.1
itself (live or its transcript), so this list cannot drift from 7.4."""

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


class Acl74Conn:
    """An ExactConn to Redis 7.0.15 whose ACL GETUSER and ACL LIST replies
    come back as 7.4 gives them (the sanitize-payload flag above)."""

    def __init__(self, conn):
        self.conn = conn

    def call(self, *args):
        raw, value = self.conn.call(*args)
        words = [a.decode() if isinstance(a, bytes) else str(a) for a in args[:2]]
        if [w.upper() for w in words] in (["ACL", "GETUSER"], ["ACL", "LIST"]):
            return acl_raw_as74(raw), acl_value_as74(value)
        return raw, value

    def __getattr__(self, name):
        return getattr(self.conn, name)
