"""ref74.py: Redis 7.4.1 as the reference of a differential test, live or
from a transcript.

utils/dev/redis74-ref.sh builds a 7.4.1 redis-server outside the tree (from a
snapshot of the redis repository) when it can; CI cannot, so every reply a
test takes from 7.4.1 is also kept in a transcript under transcripts/.  A
test asks Ref74 for its replies: with a live 7.4.1 they come from it (and
RL_RECORD_74=1 rewrites the transcript from them: utils/dev/gen-74-transcripts.py
does that); without one they come from the transcript, and a request the
transcript lacks fails the test (no skip).  Replies are typed values as the
tests' RESP readers return them: (type, value) tuples holding bytes.
RL_REF74=transcript forces the transcript even where 7.4.1 exists."""
import gzip
import json
import os
import subprocess

import benchlib
from conftest import ROOT

TRANSCRIPTS = os.path.join(os.path.dirname(__file__), "transcripts")
RECORD = os.environ.get("RL_RECORD_74") == "1"


def binary():
    """A Redis 7.4.1 redis-server from utils/dev/redis74-ref.sh, or None."""
    if os.environ.get("RL_REF74") == "transcript":
        return None
    try:
        p = subprocess.run([os.path.join(ROOT, "utils", "dev", "redis74-ref.sh")], capture_output=True, text=True,
                           timeout=900)
    except subprocess.TimeoutExpired:
        return None
    path = p.stdout.strip()
    return path if p.returncode == 0 and os.path.exists(path) else None


def enc(x):
    """A typed reply as JSON: bytes as ["b", latin-1 text], tuples as ["t", [...]]."""
    if isinstance(x, bytes):
        return ["b", x.decode("latin-1")]
    if isinstance(x, tuple):
        return ["t", [enc(y) for y in x]]
    if isinstance(x, list):
        return ["l", [enc(y) for y in x]]
    return x


def dec(x):
    if isinstance(x, list):
        tag, v = x
        if tag == "b":
            return v.encode("latin-1")
        if tag == "t":
            return tuple(dec(y) for y in v)
        return [dec(y) for y in v]
    return x


class Ref74:
    """The reference for one test module: name picks its transcript
    (transcripts/<name>_74.json.gz, gzipped: COMMAND DOCS alone is 2.6 MB
    of JSON); extra: the server's arguments."""

    def __init__(self, name, extra=()):
        self.path = os.path.join(TRANSCRIPTS, name + "_74.json.gz")
        self.recorded = {}
        if os.path.exists(self.path):
            with gzip.open(self.path, "rt") as f:
                self.recorded = json.load(f)["replies"]
        self.fresh = {}
        path = binary()
        self.server = None
        if path:
            self.server = benchlib.Server(path, ["--save", ""] + list(extra), timeout=30, wait="any",
                                          prefix="rl-ref74-")

    @property
    def live(self):
        return self.server is not None

    @property
    def port(self):
        return self.server.port

    def reply(self, key, compute):
        """The reference's reply for key: compute() on the live server
        (recorded), else the transcript's."""
        k = json.dumps(key)
        if self.live:
            v = compute()
            self.fresh[k] = enc(v)
            return v
        assert k in self.recorded, "no 7.4.1 reply recorded for %s: run utils/dev/gen-74-transcripts.py" % k
        return dec(self.recorded[k])

    def stop(self):
        if self.server:
            self.server.stop()
        if self.live and RECORD:
            merged = dict(self.recorded)
            merged.update(self.fresh)
            doc = {"_": "Recorded from a real Redis 7.4.1 by utils/dev/gen-74-transcripts.py (RL_RECORD_74=1); "
                        "do not edit by hand.", "replies": merged}
            with gzip.GzipFile(self.path, "wb", mtime=0) as f:
                f.write(json.dumps(doc, sort_keys=True).encode())


class RefConn:
    """A connection-like view of Ref74: call(*args) returns the typed reply;
    factory(port, proto) makes the live connection when there is one."""

    def __init__(self, ref, proto, factory, tag="conn"):
        self.ref, self.proto, self.tag = ref, proto, tag
        self.conn = factory(ref.port, proto) if ref.live else None

    def call(self, *args):
        key = [self.tag, self.proto] + [a if isinstance(a, str) else a.decode("latin-1") for a in args]
        return self.ref.reply(key, lambda: self.conn.call(*args))

    def close(self):
        if self.conn:
            self.conn.close()
