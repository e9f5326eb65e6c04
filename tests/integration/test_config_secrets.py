"""requirepass and masterauth hold any bytes, as in Redis: a NUL, quotes
and spaces are part of the password whether it comes from CONFIG SET, a
config file or the command line; CONFIG GET returns it whole and CONFIG
REWRITE writes it so that it loads back.  CONFIG SET takes any string
parameter as given (a quote in it is not a syntax error), and a bare
`save` line in a file means no snapshots, as Redis reads it (its own test
suite writes one).  Each behaviour is checked on redis-server too."""
import pytest
import redis

from conftest import REDIS_SERVER, SERVER

pytestmark = pytest.mark.differential

BOTH = pytest.mark.parametrize("binary", [SERVER, REDIS_SERVER], ids=["ours", "redis"])
SECRETS = ["abc\x00def", 'a"b c', "x'y\\z", " lead", "\x01\x7f"]


def auth_ok(port, password):
    try:
        return redis.Redis(port=port, password=password, encoding="latin-1").ping()
    except redis.AuthenticationError:
        return False
    except redis.ResponseError as e:
        if "WRONGPASS" in str(e):
            return False
        raise


@BOTH
@pytest.mark.parametrize("secret", SECRETS, ids=["nul", "quote-space", "quote-backslash", "leading-space", "control"])
def test_requirepass_takes_any_bytes(start_server, binary, secret):
    s = start_server(binary=binary)
    c = redis.Redis(port=s.port, encoding="latin-1")
    assert c.config_set("requirepass", secret)
    c = redis.Redis(port=s.port, password=secret, encoding="latin-1")
    assert c.config_get("requirepass") == {"requirepass": secret}
    assert auth_ok(s.port, secret)
    if "\x00" in secret:
        assert not auth_ok(s.port, secret.split("\x00")[0])  # not cut at the NUL
    c.config_set("requirepass", "")


@BOTH
def test_a_password_with_a_nul_survives_config_rewrite(start_server, binary):
    s = start_server(config_text="save \"\"\n", binary=binary)
    c = redis.Redis(port=s.port, encoding="latin-1")
    secret = 'p"\x00 w'
    c.config_set("requirepass", secret)
    c = redis.Redis(port=s.port, password=secret, encoding="latin-1")
    assert c.config_rewrite()
    with open(s.dir + "/test.conf", encoding="latin-1") as f:
        text = f.read()
    assert "requirepass " in text and "\x00" not in text  # escaped, not raw
    s.stop()
    again = start_server(config_text=text, binary=binary)  # its own port and dir on the command line
    assert auth_ok(again.port, secret)
    assert not auth_ok(again.port, "p\"")


@BOTH
def test_masterauth_with_a_nul(start_server, binary):
    from repl_helpers import wait_for, wait_link_up
    secret = "abc\x00def"
    m = start_server(args=["--repl-diskless-sync-delay", "0"], binary=binary)
    redis.Redis(port=m.port, encoding="latin-1").config_set("requirepass", secret)
    r = start_server(binary=binary)
    rc = redis.Redis(port=r.port, encoding="latin-1")
    rc.config_set("masterauth", "abc")
    rc.replicaof("127.0.0.1", m.port)
    wait_for(lambda: "Unable to AUTH to MASTER" in r.read_log(), 20, what="the failed AUTH")
    assert rc.info("replication")["master_link_status"] == "down"
    rc.config_set("masterauth", secret)
    wait_link_up(rc)
    assert rc.config_get("masterauth") == {"masterauth": secret}


@BOTH
def test_config_set_takes_a_string_as_given(start_server, binary):
    s = start_server(binary=binary)
    c = redis.Redis(port=s.port, decode_responses=True)
    assert c.config_set("masteruser", 'we"ird')
    assert c.config_get("masteruser") == {"masteruser": 'we"ird'}
    assert c.config_set("masteruser", "")


@BOTH
def test_a_bare_save_line_means_no_snapshots(start_server, binary):
    s = start_server(config_text="save 900 1\nsave \n", binary=binary)
    assert redis.Redis(port=s.port, decode_responses=True).config_get("save") == {"save": ""}
