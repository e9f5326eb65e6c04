#!/usr/bin/python3
"""gen-74-transcripts.py: record Redis 7.4.1's replies to the scenarios of
tests/integration/hash_ttl_scenarios.py (and its DUMP payloads of hashes
with field TTLs) into tests/integration/transcripts/hash_ttl_74.json; then
re-record the transcripts of the tests that take their 7.4.1 replies
through tests/integration/ref74.py (test_r74_surface.py,
test_command_meta.py, test_command_coverage.py, test_acl_differential.py,
test_script_eviction_74.py, test_acl_74.py, test_config_74.py,
test_acl_texts_74.py, test_stream_rdb_74.py, test_r74_checks.py:
transcripts/*_74.json.gz)
by running them with RL_RECORD_74=1 against the live 7.4.1.

The 7.4.1 server comes from utils/dev/redis74-ref.sh (built outside the tree,
cached).  test_hash_ttl_74.py compares ours with a live 7.4.1 when the
script can provide one and with this transcript otherwise (CI has none).
Re-run after changing the scenarios and commit the JSON.

Usage: utils/dev/gen-74-transcripts.py"""
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "utils", "bench"))
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
import benchlib  # noqa: E402
import hash_ttl_scenarios as sc  # noqa: E402


def record(binary):
    s = benchlib.Server(binary, ["--save", ""], timeout=30, wait="any", prefix="rl-gen74-")
    try:
        c = s.client(decode_responses=False)
        out = {"scenarios": {}, "dumps": {}}
        for name, cmds in sc.SCENARIOS.items():
            c.flushall()
            out["scenarios"][name] = sc.run(c, cmds)
        for name, cmds in sc.DUMPS.items():
            c.flushall()
            sc.run(c, cmds)
            out["dumps"][name] = c.dump("d").hex()
        return out
    finally:
        s.stop()


# Test modules whose 7.4.1 replies ref74.py keeps in transcripts/*_74.json.gz.
RECORDED_BY_TESTS = ["test_r74_surface.py", "test_command_meta.py", "test_command_coverage.py",
                     "test_acl_differential.py", "test_script_eviction_74.py",
                     "test_acl_74.py", "test_config_74.py", "test_acl_texts_74.py",
                     "test_stream_rdb_74.py", "test_r74_checks.py"]


def main():
    binary = subprocess.run([os.path.join(ROOT, "utils", "dev", "redis74-ref.sh")], capture_output=True, text=True,
                            check=True).stdout.strip()
    data = record(binary)
    data["_"] = "Recorded from a real Redis 7.4.1 by utils/dev/gen-74-transcripts.py; do not edit by hand."
    path = os.path.join(ROOT, "tests", "integration", "transcripts", "hash_ttl_74.json")
    with open(path, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    print(path)
    # The ref74.py transcripts: each test records what it asked 7.4.1.
    env = dict(os.environ, RL_RECORD_74="1")
    env.pop("RL_REF74", None)
    tests = [os.path.join(ROOT, "tests", "integration", t) for t in RECORDED_BY_TESTS]
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"] + tests, env=env, check=True)


if __name__ == "__main__":
    main()
