"""suitelib.py: what the client-suite tools (redis-py-suite.py,
redis-py-cluster-suite.py, hiredis-suite.py, ioredis-suite.py) print at
the end of a run of the same suite on our server and on a reference Redis:
the tests that passed on one side only."""


def print_one_side_only(res, passed, reference="Redis", key=None):
    """res: {"ours"|"redis": {test: outcome}}, passed: {side: set of tests}.
    Prints the tests that passed on one side only (each with the other
    side's outcome); returns the exit code: 1 when a test passed on the
    reference only."""
    only_redis = sorted(passed["redis"] - passed["ours"], key=key)
    only_ours = sorted(passed["ours"] - passed["redis"], key=key)
    print("passed on %s only (%d):" % (reference, len(only_redis)))
    for t in only_redis:
        print("  %s (ours: %s)" % (t, res["ours"].get(t, "not run")))
    print("passed on ours only (%d):" % len(only_ours))
    for t in only_ours:
        print("  %s (Redis: %s)" % (t, res["redis"].get(t, "not run")))
    return 1 if only_redis else 0
