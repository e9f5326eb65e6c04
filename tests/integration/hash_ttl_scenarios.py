"""hash_ttl_scenarios.py: command sequences whose replies must be Redis
7.4.1's (hash field expiry and the other 7.2/7.4 additions), shared by
test_hash_ttl_74.py and utils/gen-74-transcripts.py.

Every reply is deterministic: relative TTLs are read back in seconds
(HTTL rounds up) or set as absolute times far in the future, so a run
against a live 7.4.1 and a run against the recorded transcript compare
the same thing.  run() turns replies into JSON values: bytes as text,
errors as {"err": text}."""
import redis

FAR = 4102444800000  # 2100-01-01 in ms: an absolute TTL that never passes in a test

SCENARIOS = {
    "basic": [
        ["HSET", "h", "a", "1", "b", "2", "c", "3"],
        ["HEXPIRE", "h", "100", "FIELDS", "2", "a", "x"],
        ["OBJECT", "ENCODING", "h"],
        ["HTTL", "h", "FIELDS", "3", "a", "b", "x"],
        ["HPEXPIRE", "h", "50000", "NX", "FIELDS", "2", "a", "b"],
        ["HGETALL", "h"],
        ["HPERSIST", "h", "FIELDS", "3", "a", "b", "x"],
        ["HTTL", "h", "FIELDS", "2", "a", "b"],
        ["HEXPIRE", "h", "0", "FIELDS", "1", "c"],
        ["HGETALL", "h"],
        ["HLEN", "h"],
    ],
    "conditions": [
        ["HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4"],
        ["HPEXPIREAT", "h", str(FAR), "FIELDS", "1", "a"],
        ["HPEXPIREAT", "h", str(FAR + 1000), "XX", "FIELDS", "2", "a", "b"],
        ["HPEXPIREAT", "h", str(FAR - 1000), "GT", "FIELDS", "2", "a", "b"],
        ["HPEXPIREAT", "h", str(FAR - 1000), "LT", "FIELDS", "3", "a", "b", "c"],
        ["HPEXPIREAT", "h", str(FAR), "NX", "FIELDS", "3", "a", "c", "d"],
        ["HPEXPIRETIME", "h", "FIELDS", "5", "a", "b", "c", "d", "e"],
        ["HEXPIRETIME", "h", "FIELDS", "2", "a", "d"],
        ["HGETALL", "h"],
        ["HKEYS", "h"],
        ["HSET", "h", "a", "new"],
        ["HPEXPIRETIME", "h", "FIELDS", "1", "a"],
        ["HINCRBY", "h", "c", "5"],
        ["HPEXPIRETIME", "h", "FIELDS", "1", "c"],
        ["HGETALL", "h"],
    ],
    "errors": [
        ["HSET", "h", "a", "1"],
        ["SET", "s", "x"],
        ["HEXPIRE", "s", "10", "FIELDS", "1", "a"],
        ["HTTL", "s", "FIELDS", "1", "a"],
        ["HEXPIRE", "h", "10", "FIELDS", "2", "a"],
        ["HEXPIRE", "h", "10", "FIELDS", "0", "a"],
        ["HEXPIRE", "h", "10", "FIELDS", "-1", "a"],
        ["HEXPIRE", "h", "10", "FIELDS", "x", "a"],
        ["HEXPIRE", "h", "10", "FOO", "1", "a"],
        ["HEXPIRE", "h", "10", "NX", "XX", "FIELDS", "1", "a"],
        ["HEXPIRE", "h", "-1", "FIELDS", "1", "a"],
        ["HEXPIRE", "h", "abc", "FIELDS", "1", "a"],
        ["HEXPIRE", "h", "9999999999999999", "FIELDS", "1", "a"],
        ["HPEXPIREAT", "h", "281474976710656", "FIELDS", "1", "a"],
        ["HTTL", "h", "FIELDS", "0", "a"],
        ["HTTL", "h", "FIELDS", "2", "a"],
        ["HTTL", "h", "FOO", "1", "a"],
        ["HPERSIST", "h", "FIELDS", "0"],
        ["HPERSIST", "nokey", "FIELDS", "1", "a"],
        ["HTTL", "nokey", "FIELDS", "2", "a", "b"],
        ["HEXPIRE", "nokey", "10", "FIELDS", "1", "a"],
        ["HEXPIRE", "h"],
        ["HTTL", "h", "FIELDS"],
    ],
    "hashtable": [
        ["HSET", "big", *sum([["f%d" % i, "v%d" % i] for i in range(300)], [])],
        ["OBJECT", "ENCODING", "big"],
        ["HPEXPIREAT", "big", str(FAR), "FIELDS", "3", "f1", "f2", "nope"],
        ["HPEXPIRETIME", "big", "FIELDS", "3", "f1", "f2", "f3"],
        ["HPERSIST", "big", "FIELDS", "2", "f1", "f3"],
        ["HPEXPIREAT", "big", "1", "FIELDS", "1", "f5"],
        ["HLEN", "big"],
        ["HEXISTS", "big", "f5"],
        ["HPEXPIRETIME", "big", "FIELDS", "2", "f1", "f2"],
        ["OBJECT", "ENCODING", "big"],
    ],
    "conversion": [
        ["CONFIG", "SET", "hash-max-listpack-entries", "4"],
        ["HSET", "c", "a", "1", "b", "2"],
        ["HPEXPIREAT", "c", str(FAR), "FIELDS", "1", "b"],
        ["OBJECT", "ENCODING", "c"],
        ["HSET", "c", "x", "1", "y", "2", "z", "3"],
        ["OBJECT", "ENCODING", "c"],
        ["HPEXPIRETIME", "c", "FIELDS", "2", "a", "b"],
        ["CONFIG", "SET", "hash-max-listpack-entries", "128"],
    ],
    "hscan": [
        ["HSET", "h", "a", "1", "b", "2"],
        ["HSCAN", "h", "0", "NOVALUES"],
        ["HSCAN", "h", "0", "MATCH", "a", "NOVALUES"],
        ["HSCAN", "h", "0"],
        ["SADD", "s", "x"],
        ["SSCAN", "s", "0", "NOVALUES"],
        ["SCAN", "0", "NOVALUES"],
    ],
    "zrank_withscore": [  # Redis 7.2
        ["ZADD", "z", "1.5", "a", "2", "b"],
        ["ZRANK", "z", "b", "WITHSCORE"],
        ["ZREVRANK", "z", "a", "withscore"],
        ["ZRANK", "z", "x", "WITHSCORE"],
        ["ZRANK", "z", "a", "foo"],
        ["ZRANK", "z", "a", "WITHSCORE", "x"],
        ["ZRANK", "nokey", "a", "WITHSCORE"],
        ["ZRANK", "z", "a"],
    ],
    "last_field_deleted": [
        ["HSET", "h", "a", "1"],
        ["HPEXPIREAT", "h", "1", "FIELDS", "1", "a"],
        ["EXISTS", "h"],
        ["HSET", "h2", "a", "1", "b", "2"],
        ["HEXPIREAT", "h2", "1", "FIELDS", "2", "a", "b"],
        ["EXISTS", "h2"],
    ],
}

# 7.4.1's DUMP payloads of hashes with field TTLs (recorded as hex), which
# ours must RESTORE with the same fields and TTLs.
DUMPS = {
    "small": [["HSET", "d", "a", "1", "b", "two"], ["HPEXPIREAT", "d", str(FAR), "FIELDS", "1", "a"]],
    "big": [["HSET", "d", *sum([["f%d" % i, "v" * (i % 7)] for i in range(200)], [])],
            ["HPEXPIREAT", "d", str(FAR), "FIELDS", "2", "f3", "f9"],
            ["HPEXPIREAT", "d", str(FAR + 5000), "FIELDS", "1", "f100"]],
}


def value(x):
    if isinstance(x, bytes):
        return x.decode("utf-8", "backslashreplace")
    if isinstance(x, dict):  # redis-py's HGETALL: a list of pairs in reply order
        return [[value(k), value(v)] for k, v in x.items()]
    if isinstance(x, (list, tuple)):
        return [value(y) for y in x]
    if isinstance(x, redis.ResponseError):
        return {"err": str(x)}
    return x


def run(client, commands):
    client.response_callbacks.clear()  # raw replies, as the server sent them
    out = []
    for cmd in commands:
        try:
            out.append(value(client.execute_command(*cmd)))
        except redis.ResponseError as e:
            out.append({"err": str(e)})
    return out
