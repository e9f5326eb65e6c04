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
