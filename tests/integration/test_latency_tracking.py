"""LATENCY HISTOGRAM, INFO latencystats, LATENCY DOCTOR and LATENCY GRAPH.

Durations differ between two servers, so the differential parts compare
what is deterministic against Debian's redis-server 7.0.15 (RESP2 and
RESP3 reply types, map keys, call counts, the set of commands listed, the
histogram's bucket edges, CONFIG texts and errors, the fixed DOCTOR
replies, help and error texts); the numbers are checked exactly against a
model of the histogram layout (2 significant digits over 1 ns .. 1 s) and,
for GRAPH and DOCTOR, against the samples LATENCY HISTORY returns.

Run alone: /usr/bin/python3 -m pytest -q tests/integration/test_latency_tracking.py"""
import re
import time

import pytest

from test_command_meta import Typed as TypedBase
from compat74 import as74  # 7.4's changed texts on 7.0's replies


class Typed(TypedBase):
    """Typed replies, plus RESP3 verbatim strings (INFO, DOCTOR, GRAPH):
    ("=", b"txt:...")."""

    def read(self):
        if not self.buf.startswith(b"="):
            while b"\r\n" not in self.buf:
                self.buf += self.sock.recv(1 << 20)
            if not self.buf.startswith(b"="):
                return super().read()
        line = self._line()
        n = int(line[1:])
        while len(self.buf) < n + 2:
            self.buf += self.sock.recv(1 << 20)
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return ("=", data)

pytestmark = pytest.mark.differential

# ------------------------------------------------------------ the layout model

SUB = 256          # 2 significant digits: 2 * 10^2 rounded up to a power of two
HALF = SUB // 2


def slot_range(v):
    """(lowest, highest) value sharing v's slot."""
    if v < SUB:
        return v, v
    b = v.bit_length() - 8          # doubling range of v (>= 1)
    low = (v >> b) << b
    return low, low + (1 << b) - 1


# Keys LATENCY HISTOGRAM can show: the highest value (us) of the slot of
# each reporting level 1024 * 2^k ns, and the last slot (1073741 us).
EDGES = [slot_range(1024 << k)[1] // 1000 for k in range(20)] + [1073741]


def test_edges_model():
    assert EDGES[:12] == [1, 2, 4, 8, 16, 33, 66, 132, 264, 528, 1056, 2113]


def pairs(v):
    t, val = v
    return val if t == "%" else list(zip(val[0::2], val[1::2]))


def text(v):
    return v[1].decode()


def shape(reply):
    """The reply with the points under histogram_usec reduced to their
    types (how many there are depends on timing): what must be identical
    on both servers."""
    t, val = reply
    out = []
    for name, body in pairs(reply):
        fields = []
        for k, v in pairs(body):
            if text(k) == "histogram_usec":
                fields.append((k, (v[0], sorted({(a[0], b[0]) for a, b in pairs(v)}))))
            else:
                fields.append((k, v))
        out.append((name, (body[0], fields)))
    return t, sorted(out, key=repr)


def check_cdf(body):
    """The histogram of one command: keys are reporting edges, counts grow,
    the last one is the number of calls."""
    d = dict((text(k), v) for k, v in pairs(body))
    calls = int(d["calls"][1])
    points = [(int(a[1]), int(b[1])) for a, b in pairs(d["histogram_usec"])]
    assert points, d
    keys = [p[0] for p in points]
    assert all(k in EDGES for k in keys), keys
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    counts = [p[1] for p in points]
    assert all(a < b for a, b in zip(counts, counts[1:]))
    assert counts[-1] == calls
    return calls, points


def workload(c):
    for i in range(20):
        c.call("SET", "k%d" % i, "v")
    for i in range(7):
        c.call("GET", "k%d" % i)
    c.call("CONFIG", "GET", "maxmemory")
    c.call("CONFIG", "GET", "hz")


@pytest.fixture
def pair(server, redis_ref):
    return server.port, redis_ref.port


@pytest.mark.parametrize("proto", [2, 3])
def test_histogram_matches_redis(pair, proto):
    conns = [Typed(p, proto) for p in pair]
    replies = []
    for c in conns:
        assert c.call("CONFIG", "RESETSTAT")[0] == "+"
        workload(c)
        replies.append({
            "named": c.call("LATENCY", "HISTOGRAM", "set", "GET", "config", "nosuch", "config|nosuch"),
            "sub": c.call("LATENCY", "HISTOGRAM", "config|get"),
            "none": c.call("LATENCY", "HISTOGRAM", "nosuch"),
            "all": c.call("LATENCY", "HISTOGRAM"),
        })
    ours, theirs = replies
    for what in ("named", "sub", "none", "all"):
        assert shape(ours[what]) == shape(theirs[what]), what
    named = {text(n): check_cdf(b)[0] for n, b in pairs(ours["named"])}
    assert named == {"set": 20, "get": 7, "config|get": 2, "config|resetstat": 1}
    assert [text(n) for n, _ in pairs(ours["sub"])] == ["config|get"]
    assert pairs(ours["none"]) == []
    listed = {text(n) for n, b in pairs(ours["all"])}
    assert listed == {text(n) for n, b in pairs(theirs["all"])}
    assert {"set", "get", "config|get", "config|resetstat", "latency|histogram"} <= listed
    for _, b in pairs(ours["all"]):
        check_cdf(b)
    for c in conns:
        c.close()


def latencystats(c):
    t, body = c.call("INFO", "latencystats")
    if t == "=":
        body = body[4:]                       # "txt:"
    lines = body.decode().split("\r\n")
    assert lines[0] == "# Latencystats"
    return {l.split(":", 1)[0]: l.split(":", 1)[1] for l in lines[1:] if l}


def test_info_latencystats_matches_redis(pair):
    conns = [Typed(p, 2) for p in pair]
    stats = []
    for c in conns:
        c.call("CONFIG", "RESETSTAT")
        workload(c)
        stats.append(latencystats(c))
        # Not in the default sections, in all and everything.
        assert b"latency_percentiles_usec_" not in c.call("INFO")[1]
        assert b"latency_percentiles_usec_set:" in c.call("INFO", "all")[1]
        assert b"latency_percentiles_usec_set:" in c.call("INFO", "everything")[1]
    ours, theirs = stats
    assert set(ours) == set(theirs)
    labels = re.compile(r"^p50=(\d+\.\d{3}),p99=(\d+\.\d{3}),p99\.9=(\d+\.\d{3})$")
    for name, line in ours.items():
        assert labels.match(theirs[name]), theirs[name]
        m = labels.match(line)
        assert m, line
        values = [round(float(x) * 1000) for x in m.groups()]
        # Each percentile is the highest value of a slot, and they grow.
        assert all(slot_range(v)[1] == v for v in values), (name, values)
        assert values == sorted(values)
    for c in conns:
        c.close()


PERCENTILE_SETS = ["0 100 33.333333 1e1", "99.99999999", "", "50", "  50   99 ", "101", "-1", "50 nan", "abc",
                   "50 inf", "5 5"]


def test_percentile_config_matches_redis(pair):
    conns = [Typed(p, 2) for p in pair]
    try:
        for value in PERCENTILE_SETS:
            got = [c.call("CONFIG", "SET", "latency-tracking-info-percentiles", value) for c in conns]
            assert got[0] == got[1], value
            got = [c.call("CONFIG", "GET", "latency-tracking*") for c in conns]
            assert sorted(got[0][1]) == sorted(got[1][1]), value
            for c in conns:
                c.call("GET", "x")
            keys = [latencystats(c)["latency_percentiles_usec_get"] for c in conns]
            assert [kv.split("=")[0] for kv in keys[0].split(",")] == [kv.split("=")[0] for kv in keys[1].split(",")]
        for bad in ("maybe", ""):
            got = [c.call("CONFIG", "SET", "latency-tracking", bad) for c in conns]
            assert got[0] == got[1]
    finally:
        for c in conns:
            c.call("CONFIG", "SET", "latency-tracking-info-percentiles", "50 99 99.9")
            c.call("CONFIG", "SET", "latency-tracking", "yes")
            c.close()


def test_tracking_off_and_reset(server):
    c = Typed(server.port, 3)
    c.call("CONFIG", "RESETSTAT")
    c.call("CONFIG", "SET", "latency-tracking", "no")
    try:
        c.call("SET", "a", "1")
        c.call("GET", "a")
        assert c.call("LATENCY", "HISTOGRAM", "set", "get") == ("%", [])
        assert b"latency_percentiles_usec_get" not in c.call("INFO", "latencystats")[1]
    finally:
        c.call("CONFIG", "SET", "latency-tracking", "yes")
    c.call("GET", "a")
    (name, body), = pairs(c.call("LATENCY", "HISTOGRAM", "get"))
    assert text(name) == "get" and check_cdf(body)[0] == 1
    c.call("CONFIG", "RESETSTAT")
    assert c.call("LATENCY", "HISTOGRAM", "get") == ("%", [])
    c.close()


def test_help_and_errors_match_redis(pair):
    conns = [Typed(p, 2) for p in pair]
    for args in (("HELP",), ("NOSUCH",), ("GRAPH",), ("GRAPH", "nosuch-event"), ("DOCTOR", "x"),
                 ("LATEST", "x")):
        got = [c.call("LATENCY", *args) for c in conns]
        assert got[0] == as74(got[1]), args
    for c in conns:
        c.close()


def test_doctor_fixed_replies_match_redis(pair):
    for proto in (2, 3):
        conns = [Typed(p, proto) for p in pair]
        try:
            for threshold in ("0", "1"):
                got = []
                for c in conns:
                    c.call("LATENCY", "RESET")
                    c.call("CONFIG", "SET", "latency-monitor-threshold", threshold)
                    got.append(c.call("LATENCY", "DOCTOR"))
                assert got[0] == got[1], (proto, threshold)
                assert b"Dave" in got[0][1]
        finally:
            for c in conns:
                c.call("CONFIG", "SET", "latency-monitor-threshold", "0")
                c.close()


# ------------------------------------------------------------ GRAPH and DOCTOR, exact

def age(secs):
    if secs < 60:
        return "%ds" % secs
    if secs < 3600:
        return "%dm" % (secs // 60)
    if secs < 86400:
        return "%dh" % (secs // 3600)
    return "%dd" % (secs // 86400)


def model_graph(event, history, worst, now):
    """The graph Redis draws for these samples (4 rows of 3 levels, then a
    blank row and the age labels written downwards)."""
    values = [lat for _, lat in history]
    labels = [age(now - t) for t, _ in history]
    lo, hi = min(values), max(values)
    out = "%s - high %d ms, low %d ms (all time high %d ms)\n" % (event, hi, lo, worst) + "-" * 80 + "\n"
    rel = (hi - lo) or 1
    steps = 12
    heights = [min(max(int(int((v - lo) * steps) / rel), 0), steps - 1) for v in values]
    for row in range(4):
        line = ""
        for h in heights:
            lvl = h - 3 * (3 - row)
            line += " " if lvl < 0 else "_o#"[lvl] if lvl < 3 else "|"
        out += line + "\n"
    out += " " * len(values) + "\n"
    for k in range(max(len(l) for l in labels)):
        out += "".join(l[k] if len(l) > k else " " for l in labels) + "\n"
    return out


def model_doctor_line(num, event, history, worst, now):
    lats = [lat for _, lat in history]
    avg = sum(lats) // len(lats)
    mad = sum(abs(avg - l) for l in lats) // len(lats)
    period = max(now - min(t for t, _ in history), 1)
    return ("%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event "
            "%dms." % (num, event, len(lats), avg, mad, period / len(lats), worst))


def test_graph_and_doctor_exact(server):
    r = server.client()
    r.execute_command("LATENCY", "RESET")
    r.config_set("latency-monitor-threshold", 5)
    try:
        for secs in ("0.03", "0.09", "0.015"):
            r.execute_command("DEBUG", "SLEEP", secs)
            time.sleep(1.05)              # one sample per second: each one is kept
        history = [(int(t), int(l)) for t, l in r.execute_command("LATENCY", "HISTORY", "command")]
        assert len(history) == 3
        worst = int(r.execute_command("LATENCY", "LATEST")[0][3])
        assert worst == max(l for _, l in history)
        for _ in range(3):                # a second may tick between TIME and GRAPH: retry
            before = int(r.time()[0])
            graph = r.execute_command("LATENCY", "GRAPH", "command")
            doctor = r.execute_command("LATENCY", "DOCTOR")
            after = int(r.time()[0])
            if before == after:
                break
        graph = graph.decode() if isinstance(graph, bytes) else graph
        doctor = doctor.decode() if isinstance(doctor, bytes) else doctor
        assert graph == model_graph("command", history, worst, before)
        lines = doctor.split("\n")
        assert lines[0] == "Dave, I have observed latency spikes in this Redis instance. You don't mind talking " \
                           "about it, do you Dave?"
        assert lines[2] == model_doctor_line(1, "command", history, worst, before)
        assert "I have a few advices for you:" in doctor
        # slowlog-log-slower-than 10000 us is above the 5 ms threshold.
        assert "'CONFIG SET slowlog-log-slower-than 5000'" in doctor
    finally:
        r.config_set("latency-monitor-threshold", 0)
        r.execute_command("LATENCY", "RESET")


def test_blocked_command_counted_once_when_served(pair):
    """BLPOP that blocks and is then served enters LATENCY HISTOGRAM once
    (when served), on both servers."""
    got = []
    for port in pair:
        c, w = Typed(port, 3), Typed(port, 2)
        c.call("CONFIG", "RESETSTAT")
        c.call("DEL", "bl")
        c.sock.sendall(b"*3\r\n$5\r\nBLPOP\r\n$2\r\nbl\r\n$1\r\n0\r\n")
        time.sleep(0.2)
        assert w.call("RPUSH", "bl", "x")[0] == ":"
        assert c.read()[0] == "*"
        (name, body), = pairs(c.call("LATENCY", "HISTOGRAM", "blpop"))
        got.append((text(name), check_cdf(body)[0]))
        c.close()
        w.close()
    assert got[0] == got[1] == ("blpop", 1)
