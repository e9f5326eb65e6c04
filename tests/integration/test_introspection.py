"""Introspection: SLOWLOG, LATENCY, MONITOR, CLIENT LIST flags, INFO
commandstats/errorstats, CONFIG REWRITE and RESET."""
import os
import re
import time

import pytest
import redis

from rawresp import RawConn


def slow_entries(r, n=-1):
    return r.execute_command("SLOWLOG", "GET", n)


# ---------------------------------------------------------------- SLOWLOG

def test_slowlog_entry_shape(server, r):
    r.config_set("slowlog-log-slower-than", 0)
    try:
        r.client_setname("sl-client")
        r.slowlog_reset()
        r.set("k", "v")
        entries = slow_entries(r, 2)
        assert len(entries) == 2
        eid, ts, dur, argv, addr, name = entries[0]
        assert argv == ["set", "k", "v"] or argv == ["SET", "k", "v"]
        assert abs(ts - time.time()) < 5 and dur >= 0
        assert name == "sl-client"
        me = r.client_info()
        assert addr == me["addr"]
        # Newest first, ids increase; the RESET itself was logged before.
        assert entries[1][3] == ["SLOWLOG", "RESET"] and entries[1][0] == eid - 1
        assert len(slow_entries(r, 1)) == 1
        assert r.execute_command("SLOWLOG", "LEN") >= 3
    finally:
        r.config_set("slowlog-log-slower-than", 10000)
        r.client_setname("")


def test_slowlog_truncation(r):
    r.config_set("slowlog-log-slower-than", 0)
    try:
        r.slowlog_reset()
        r.execute_command("DEL", *["k%d" % i for i in range(40)])
        r.set("long", "x" * 200)
        by_cmd = {e[3][0].lower(): e[3] for e in slow_entries(r)}
        dele = by_cmd["del"]
        assert len(dele) == 32 and dele[30] == "k29" and dele[31] == "... (10 more arguments)"
        val = by_cmd["set"][2]
        assert val == "x" * 128 + "... (72 more bytes)"
    finally:
        r.config_set("slowlog-log-slower-than", 10000)


def test_slowlog_threshold_max_len_and_errors(r):
    r.config_set("slowlog-log-slower-than", 100000)   # 100 ms
    try:
        r.slowlog_reset()
        r.execute_command("DEBUG", "SLEEP", "0.15")
        r.set("fast", "1")
        entries = slow_entries(r)
        assert [e[3][:2] for e in entries] == [["DEBUG", "SLEEP"]]
        assert entries[0][2] >= 150000
        r.config_set("slowlog-log-slower-than", 0)
        r.config_set("slowlog-max-len", 3)
        for i in range(10):
            r.ping()
        assert r.execute_command("SLOWLOG", "LEN") == 3
        assert len(slow_entries(r, -1)) == 3
        r.config_set("slowlog-log-slower-than", -1)
        r.slowlog_reset()
        r.ping()
        assert r.execute_command("SLOWLOG", "LEN") == 0
        for bad in ("-2", "x"):
            with pytest.raises(redis.ResponseError, match="count should be greater than or equal to -1"):
                r.execute_command("SLOWLOG", "GET", bad)
        assert any("RESET" in line for line in r.execute_command("SLOWLOG", "HELP"))
    finally:
        r.config_set("slowlog-log-slower-than", 10000)
        r.config_set("slowlog-max-len", 128)


# ---------------------------------------------------------------- LATENCY

def test_latency_monitor(r):
    r.execute_command("LATENCY", "RESET")
    r.execute_command("DEBUG", "SLEEP", "0.06")
    assert r.execute_command("LATENCY", "LATEST") == []   # threshold 0: off
    r.config_set("latency-monitor-threshold", 50)
    try:
        r.execute_command("DEBUG", "SLEEP", "0.12")
        r.get("quick")                                     # below the threshold
        latest = r.execute_command("LATENCY", "LATEST")
        assert len(latest) == 1
        name, ts, last, worst = latest[0]
        assert name == "command" and last >= 120 and worst >= last and abs(ts - time.time()) < 5
        hist = r.execute_command("LATENCY", "HISTORY", "command")
        assert len(hist) == 1 and hist[0][1] == last
        assert r.execute_command("LATENCY", "HISTORY", "nope") == []
        assert r.execute_command("LATENCY", "RESET", "nope") == 0
        assert r.execute_command("LATENCY", "RESET", "command") == 1
        assert r.execute_command("LATENCY", "LATEST") == []
        assert any("HISTORY" in line for line in r.execute_command("LATENCY", "HELP"))
    finally:
        r.config_set("latency-monitor-threshold", 0)
        r.execute_command("LATENCY", "RESET")


# ---------------------------------------------------------------- MONITOR

LINE = re.compile(r'^(\d+)\.(\d{6}) \[(\d+) ([0-9.]+:\d+)\] (.*)$')


def read_feed(m, n):
    lines = []
    for _ in range(n):
        lines.append(m.read())
    return lines


def test_monitor_feed(server, r):
    m = RawConn(server.port)
    assert m.call("MONITOR") == "OK"
    c = server.client(db=2)
    c.set("k", "v")
    r.set('a"b', "x\ny")
    r.config_get("port")                      # admin commands are not shown
    try:
        r.execute_command("AUTH", "secret")   # fails, but is shown redacted
    except redis.ResponseError:
        pass
    r.ping()
    lines = read_feed(m, 4)
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), lines
    assert abs(int(parsed[0].group(1)) - time.time()) < 5
    # The SELECT redis-py sends for db=2 comes first; as in Redis 7 the line
    # is fed after execution, so it already shows the new db.
    assert parsed[0].group(5) == '"SELECT" "2"' and parsed[0].group(3) == "2"
    assert parsed[1].group(5) == '"SET" "k" "v"' and parsed[1].group(3) == "2"
    assert parsed[2].group(5) == '"SET" "a\\"b" "x\\ny"' and parsed[2].group(3) == "0"
    assert parsed[3].group(5) == '"AUTH" "(redacted)"'
    assert LINE.match(m.read()).group(5) == '"PING"'
    assert parsed[1].group(4) != parsed[2].group(4)   # two different clients
    mon = [cl for cl in r.client_list() if "O" in cl["flags"]]
    assert len(mon) == 1
    # RESET leaves monitor mode: nothing more arrives.
    assert m.call("RESET") == "RESET"
    r.set("after", "1")
    assert m.call("PING") == "PONG"
    assert not [cl for cl in r.client_list() if "O" in cl["flags"]]
    m.close()
    c.close()


# ---------------------------------------------------------------- INFO

def test_commandstats_and_errorstats(r):
    r.config_resetstat()
    for _ in range(3):
        r.set("cs", "1")
    r.lpush("lst", "a")
    with pytest.raises(redis.ResponseError):
        r.incr("lst")
    with pytest.raises(redis.ResponseError):
        r.execute_command("NOSUCHCMD")
    stats = r.info("commandstats")
    assert stats["cmdstat_set"]["calls"] == 3
    assert stats["cmdstat_incrby"]["failed_calls"] == 1   # redis-py's incr sends INCRBY
    errs = r.info("errorstats")   # redis-py leaves these values as "count=N"
    assert str(errs["errorstat_WRONGTYPE"]) in ("count=1", "{'count': 1}")
    assert "errorstat_ERR" in errs


# ---------------------------------------------------------------- RESET

def test_reset_clears_connection_state(server, r):
    s = RawConn(server.port)
    s.call("CLIENT", "SETNAME", "resetme")
    s.call("SELECT", "5")
    s.call("SUBSCRIBE", "x")
    s.call("PSUBSCRIBE", "y*")
    assert r.pubsub_numsub("x") == [("x", 1)]
    assert s.call("RESET") == "RESET"
    info = s.call("CLIENT", "INFO").decode()
    assert " db=0 " in info and " name= " in info and " sub=0 psub=0 " in info and "flags=N" in info
    assert r.pubsub_numsub("x") == [("x", 0)] and r.pubsub_numpat() == 0
    s.close()


# ---------------------------------------------------------------- CONFIG REWRITE

CONF = """# redis-like test configuration
# (comments and blank lines must survive a rewrite)

maxmemory 100mb
hz 10
   # an indented comment
slowlog-max-len 50
slowlog-max-len 60
client-output-buffer-limit normal 0 0 0

# end of file
"""


def test_config_rewrite_keeps_layout(start_server):
    srv = start_server(config_text=CONF)
    path = os.path.join(srv.dir, "test.conf")
    c = srv.client()
    c.config_set("maxmemory", "200mb")
    c.config_set("notify-keyspace-events", "KEA")
    c.config_set("client-output-buffer-limit", "pubsub 1mb 512kb 1")
    c.config_set("latency-monitor-threshold", 25)
    assert c.execute_command("CONFIG", "REWRITE") in ("OK", True)
    text = open(path).read()
    lines = text.split("\n")
    # Comments, blank lines and unchanged lines stay where they were.
    assert lines[0] == "# redis-like test configuration"
    assert lines[2] == ""
    assert lines[3] == "maxmemory 209715200"          # changed: rewritten in place
    assert lines[4] == "hz 10"                        # unchanged: kept byte for byte
    assert lines[5] == "   # an indented comment"
    assert lines[6] == "slowlog-max-len 60"           # the value in force...
    assert lines[7] == "client-output-buffer-limit normal 0 0 0"   # ...and the duplicate is gone
    assert lines[9] == "# end of file"
    tail = text.split("# end of file\n", 1)[1]
    assert "notify-keyspace-events AKE" in tail
    assert "client-output-buffer-limit pubsub 1048576 524288 1" in tail
    assert "latency-monitor-threshold 25" in tail
    assert "hz" not in tail and "maxmemory " not in tail
    # A second rewrite with nothing changed leaves the file as it is.
    c.execute_command("CONFIG", "REWRITE")
    assert open(path).read() == text
    c.close()
    srv.stop()
    # The rewritten file starts a server with the same configuration.
    again = start_server(config_text=text)
    c2 = again.client()
    assert c2.config_get("maxmemory")["maxmemory"] == str(200 * 1024 * 1024)
    assert c2.config_get("notify-keyspace-events")["notify-keyspace-events"] == "AKE"
    assert c2.config_get("slowlog-max-len")["slowlog-max-len"] == "60"
    assert c2.config_get("client-output-buffer-limit")["client-output-buffer-limit"].endswith(
        "pubsub 1048576 524288 1")
    c2.close()


def test_config_rewrite_without_file(r):
    with pytest.raises(redis.ResponseError, match="The server is running without a config file"):
        r.execute_command("CONFIG", "REWRITE")
