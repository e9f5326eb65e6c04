"""The shipped redis-like.conf (what `make run` uses) loads, and every
directive it sets is one CONFIG GET knows, with the documented value."""
import os
import re

from conftest import ROOT


def conf_directives():
    out = {}
    with open(os.path.join(ROOT, "redis-like.conf")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, value = line.partition(" ")
            out.setdefault(name, []).append(value.strip().strip('"'))
    return out


def test_shipped_config_loads(start_server):
    with open(os.path.join(ROOT, "redis-like.conf")) as f:
        text = f.read()
    s = start_server(config_text=text)
    c = s.client()
    assert c.ping()
    directives = conf_directives()
    assert len(directives) > 50
    for name, values in directives.items():
        got = c.config_get(name)
        assert name in got, f"{name} from redis-like.conf is unknown to CONFIG GET"
    assert c.config_get("maxmemory-policy")["maxmemory-policy"] == "noeviction"
    assert c.config_get("hz")["hz"] == "10"
    assert re.match(r"normal 0 0 0 slave \d+ \d+ 60 pubsub \d+ \d+ 60",
                    c.config_get("client-output-buffer-limit")["client-output-buffer-limit"])
