"""Keyspace notifications: notify-keyspace-events flag letters (parsing,
canonical form, errors) and the events string and generic key commands
publish on __keyspace@<db>__:<key> and __keyevent@<db>__:<event>."""
import time

import pytest
import redis

from rawresp import RawConn


@pytest.fixture
def events(server, r):
    """A subscriber to every keyspace and keyevent channel; yields a
    function that sets the flags and returns the next n messages."""
    s = RawConn(server.port)
    s.call("PSUBSCRIBE", "__key*__:*")

    def collect(n, timeout=2.0):
        s.sock.settimeout(timeout)
        out = []
        for _ in range(n):
            m = s.read()
            out.append((m[2].decode(), m[3].decode()))
        return out

    yield collect
    r.config_set("notify-keyspace-events", "")
    s.close()


def assert_quiet(collect):
    """No further message arrives (a PING through the same server flushes)."""
    with pytest.raises(OSError):
        collect(1, timeout=0.2)


@pytest.mark.parametrize("given,shown", [("KEA", "AKE"), ("Kx", "xK"), ("E$", "$E"), ("AKEm", "AKEm"),
                                         ("Agn", "A"), ("Kg$lshzxetd", "AK"), ("", ""), ("Kn", "nK")])
def test_flags_canonical_form(r, given, shown):
    r.config_set("notify-keyspace-events", given)
    assert r.config_get("notify-keyspace-events")["notify-keyspace-events"] == shown
    r.config_set("notify-keyspace-events", "")


def test_invalid_flag_letter(r):
    with pytest.raises(redis.ResponseError, match=r"Invalid event class character. Use 'Ag\$lshzxeKEtmdn'."):
        r.config_set("notify-keyspace-events", "KQ")
    assert r.config_get("notify-keyspace-events")["notify-keyspace-events"] == ""


def test_string_events_both_channels(r, events):
    r.config_set("notify-keyspace-events", "KE$")
    r.set("k", "v")
    assert events(2) == [("__keyspace@0__:k", "set"), ("__keyevent@0__:set", "k")]
    r.append("k", "w")
    r.incr("n")
    r.incrbyfloat("f", 1.5)
    r.setrange("k", 0, "z")
    got = events(8)
    assert [e for ch, e in got if ch.startswith("__keyspace")] == ["append", "incrby", "incrbyfloat", "setrange"]
    assert ("__keyevent@0__:incrby", "n") in got


def test_keyspace_only_and_class_filter(r, events):
    r.config_set("notify-keyspace-events", "Kg")
    r.set("a", "1")            # string class: not selected
    r.expire("a", 100)         # generic
    r.persist("a")
    r.delete("a")
    assert events(3) == [("__keyspace@0__:a", "expire"), ("__keyspace@0__:a", "persist"),
                         ("__keyspace@0__:a", "del")]
    assert_quiet(events)


def test_generic_events(r, events):
    r.config_set("notify-keyspace-events", "Eg$")
    r.mset({"x": "1", "y": "2"})
    assert events(2) == [("__keyevent@0__:set", "x"), ("__keyevent@0__:set", "y")]
    r.rename("x", "z")
    assert events(2) == [("__keyevent@0__:rename_from", "x"), ("__keyevent@0__:rename_to", "z")]
    r.set("t", "v", ex=100)
    assert events(2) == [("__keyevent@0__:set", "t"), ("__keyevent@0__:expire", "t")]
    r.getdel("y")
    assert events(1) == [("__keyevent@0__:del", "y")]
    r.expire("z", -1)          # a past time deletes
    assert events(1) == [("__keyevent@0__:del", "z")]
    r.delete("nothing")        # nothing deleted, nothing published
    assert_quiet(events)


def test_other_database_and_expired(server, r, events):
    r.config_set("notify-keyspace-events", "KEx")
    c = server.client(db=3)
    c.set("gone", "v", px=30)
    time.sleep(0.1)
    assert c.get("gone") is None   # lazy expiry deletes it now
    assert events(2) == [("__keyspace@3__:gone", "expired"), ("__keyevent@3__:expired", "gone")]
    c.set("gone2", "v", px=30)
    # The active cycle finds it without any access.
    assert events(2, timeout=3.0) == [("__keyspace@3__:gone2", "expired"), ("__keyevent@3__:expired", "gone2")]
    c.close()


def test_new_and_keymiss(r, events):
    r.config_set("notify-keyspace-events", "Enm")
    r.set("fresh", "1")
    r.set("fresh", "2")        # overwrite: not new
    r.get("missing")
    assert events(2) == [("__keyevent@0__:new", "fresh"), ("__keyevent@0__:keymiss", "missing")]
    assert_quiet(events)


def test_all_flag_excludes_new_and_miss(r, events):
    r.config_set("notify-keyspace-events", "EA")
    r.get("missing")
    r.set("q", "1")
    assert events(1) == [("__keyevent@0__:set", "q")]
    assert_quiet(events)


def test_no_flags_no_messages(r, events):
    r.config_set("notify-keyspace-events", "g$")   # no K or E: nothing at all
    r.set("k", "v")
    r.delete("k")
    assert_quiet(events)
