"""Differential test for lists: a seeded random sequence of list commands
(valid and invalid, on few keys so they collide, with values that push the
lists across the listpack/quicklist boundary) sent to redis-like-server and
to Debian's redis-server; every reply must be byte-identical.

OBJECT ENCODING is left out: Redis 7.0 reports "quicklist" for every list,
while we follow 7.2 (listpack for small lists)."""
import random
import socket

import pytest

from conftest import REDIS_SERVER, wait_persistence_idle

pytestmark = pytest.mark.differential

KEYS = ["l1", "l2", "l3", "str"]
SEED = 20240607
N_COMMANDS = 3000


def encode(args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class RawConn:
    """A RESP connection that returns each reply as its raw bytes."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def _line(self, pos):
        while True:
            i = self.buf.find(b"\r\n", pos)
            if i >= 0:
                return i
            chunk = self.sock.recv(65536)
            assert chunk, "server closed the connection"
            self.buf += chunk

    def _need(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            assert chunk, "server closed the connection"
            self.buf += chunk

    def _skip(self, pos):
        """End offset of the reply starting at pos."""
        end = self._line(pos)
        kind, head = self.buf[pos:pos + 1], self.buf[pos + 1:end]
        if kind in b"+-:_,#":
            return end + 2
        n = int(head)
        if kind in b"$=":
            if n < 0:
                return end + 2
            self._need(end + 2 + n + 2)
            return end + 2 + n + 2
        pos = end + 2
        count = n * 2 if kind == b"%" else n
        for _ in range(max(count, 0)):
            pos = self._skip(pos)
        return pos

    def send_many(self, cmds):
        self.sock.sendall(b"".join(encode(c) for c in cmds))

    def read_many(self, n):
        replies = []
        for _ in range(n):
            end = self._skip(0)
            replies.append(self.buf[:end])
            self.buf = self.buf[end:]
        return replies

    def call_many(self, cmds):
        self.send_many(cmds)
        return self.read_many(len(cmds))

    def close(self):
        self.sock.close()


def random_value(rng):
    roll = rng.random()
    if roll < 0.35:
        return str(rng.randint(-3, 12))                 # small ints, repeated often
    if roll < 0.5:
        return str(rng.choice([2 ** 40, -(2 ** 33), 9223372036854775807, 4095, -4096]))
    if roll < 0.85:
        return rng.choice(["a", "b", "c", "hello", "", "x" * 10])
    return "v" * rng.choice([70, 300, 1500, 5000])      # crosses the 8 KB default quickly


def random_index(rng):
    return str(rng.choice([0, 1, 2, -1, -2, 5, -7, 20, -100, 1000, "x"]) if rng.random() < 0.95 else "1.5")


def random_command(rng):
    key = rng.choice(KEYS)
    key2 = rng.choice(KEYS)
    side = lambda: rng.choice(["LEFT", "RIGHT", "left", "right", "up"] if rng.random() < 0.05 else ["LEFT", "RIGHT"])
    vals = [random_value(rng) for _ in range(rng.choice([1, 1, 2, 3, 8]))]
    choice = rng.randrange(27)
    if 20 <= choice <= 23 and rng.random() < 0.85:
        choice = 7        # blocking forms wait for their timeout: keep them rare
    if choice < 4:
        return [rng.choice(["LPUSH", "RPUSH"]), key] + vals
    if choice == 4:
        return [rng.choice(["LPUSHX", "RPUSHX"]), key] + vals
    if choice in (5, 6):
        cmd = [rng.choice(["LPOP", "RPOP"]), key]
        if rng.random() < 0.5:
            cmd.append(rng.choice(["0", "1", "2", "5", "-1", "x"]))
        return cmd
    if choice == 7:
        return ["LLEN", key]
    if choice in (8, 9):
        return ["LRANGE", key, random_index(rng), random_index(rng)]
    if choice == 10:
        return ["LINDEX", key, random_index(rng)]
    if choice == 11:
        return ["LSET", key, random_index(rng), random_value(rng)]
    if choice == 12:
        return ["LINSERT", key, rng.choice(["BEFORE", "AFTER", "before", "middle"]), random_value(rng),
                random_value(rng)]
    if choice == 13:
        return ["LREM", key, rng.choice(["0", "1", "-1", "2", "-2", "x"]), random_value(rng)]
    if choice == 14:
        return ["LTRIM", key, random_index(rng), random_index(rng)]
    if choice == 15:
        cmd = ["LPOS", key, random_value(rng)]
        for opt in rng.sample(["RANK", "COUNT", "MAXLEN"], rng.randint(0, 3)):
            arg = {"RANK": ["1", "2", "-1", "-2", "0"], "COUNT": ["0", "1", "2", "-1"],
                   "MAXLEN": ["0", "1", "3", "-1"]}[opt]
            cmd += [opt, rng.choice(arg)]
        return cmd
    if choice in (16, 17):
        return ["LMOVE", key, key2, side(), side()]
    if choice == 18:
        return ["RPOPLPUSH", key, key2]
    if choice == 19:
        keys = rng.sample(KEYS, rng.randint(1, 3))
        cmd = ["LMPOP", str(len(keys) if rng.random() < 0.95 else 0)] + keys + [side()]
        if rng.random() < 0.5:
            cmd += ["COUNT", rng.choice(["1", "2", "10", "0"])]
        return cmd
    if choice == 20:
        return [rng.choice(["BLPOP", "BRPOP"])] + rng.sample(KEYS, rng.randint(1, 2)) + ["0.01"]
    if choice == 21:
        return ["BLMOVE", key, key2, side(), side(), "0.01"]
    if choice == 22:
        keys = rng.sample(KEYS, rng.randint(1, 2))
        return ["BLMPOP", "0.01", str(len(keys))] + keys + [side(), "COUNT", rng.choice(["1", "3"])]
    if choice == 23:
        return ["BRPOPLPUSH", key, key2, "0.01"]
    if choice == 24:
        return ["SET", "str", "text"] if rng.random() < 0.5 else ["DEL", key]
    if choice == 25:
        return ["EXISTS"] + KEYS
    return ["TYPE", key]


@pytest.mark.parametrize("fill,depth", [("-2", "0"), ("5", "0"), ("5", "1"), ("3", "2")])
def test_random_list_commands_match_redis(server, redis_ref, fill, depth):
    """depth: list-compress-depth, the interior nodes LZF-compressed."""
    rng = random.Random(SEED + int(fill) + 7 * int(depth))
    ours, ref = RawConn(server.port), RawConn(redis_ref.port)
    try:
        setup = [["FLUSHALL"], ["CONFIG", "SET", "list-max-listpack-size", fill],
                 ["CONFIG", "SET", "list-compress-depth", depth]]
        ours.call_many(setup)
        ref.call_many(setup)
        cmds = [random_command(rng) for _ in range(N_COMMANDS)]
        cmds += [["LRANGE", k, "0", "-1"] for k in KEYS]
        encodings, lengths = set(), []
        for start in range(0, len(cmds), 50):
            batch = cmds[start:start + 50]
            ours.send_many(batch)
            ref.send_many(batch)          # both servers work at the same time
            got, want = ours.read_many(len(batch)), ref.read_many(len(batch))
            encodings.update(ours.call_many([["OBJECT", "ENCODING", k] for k in KEYS[:3]]))
            lengths += [int(x[1:-2]) for x in ours.call_many([["LLEN", k] for k in KEYS[:3]])]
            for i, (g, w) in enumerate(zip(got, want)):
                assert g == w, "command #%d %r: ours %r, redis %r" % (start + i, batch[i], g, w)
        # The sequence really went through both encodings and long lists.
        assert b"$8\r\nlistpack\r\n" in encodings and b"$9\r\nquicklist\r\n" in encodings
        assert max(lengths) >= 10
    finally:
        for conn in (ours, ref):
            conn.call_many([["CONFIG", "SET", "list-max-listpack-size", "-2"], ["CONFIG", "SET", "list-compress-depth", "0"]])
            conn.close()


def ql_figures(c, key):
    """DEBUG OBJECT's quicklist fields (serializedlength aside: ours is 0)."""
    fields = dict(f.split(":", 1) for f in c.execute_command("DEBUG", "OBJECT", key).split() if ":" in f)
    return {k: v for k, v in fields.items() if k.startswith("ql_")}


def test_compress_depth_matches_redis_and_saves_memory(start_server):
    ours = start_server().client()
    ref = start_server(["--enable-debug-command", "local"], binary=REDIS_SERVER).client()
    values = ["value-%d-%s" % (i, "abcdefgh" * 8) for i in range(40)]
    for c in (ours, ref):
        c.config_set("list-max-listpack-size", 4)
        for depth in (0, 1, 2):
            c.config_set("list-compress-depth", depth)
            c.rpush("L%d" % depth, *values)
    for depth in (0, 1, 2):
        key = "L%d" % depth
        assert ql_figures(ours, key) == ql_figures(ref, key)
        assert ql_figures(ours, key)["ql_compressed"] == ("1" if depth else "0")
    # Interior nodes compressed: the list takes far less, and reads the same.
    plain, packed = ours.memory_usage("L0"), ours.memory_usage("L1")
    assert packed * 2 < plain, (packed, plain)
    assert ref.memory_usage("L1") * 2 < ref.memory_usage("L0")
    for c in (ours, ref):
        c.linsert("L1", "BEFORE", values[20], "pivot")
        c.lset("L1", 30, "changed")
        c.lrem("L1", 0, values[25])
        c.ltrim("L1", 1, -2)
    assert ours.lrange("L1", 0, -1) == ref.lrange("L1", 0, -1)
    assert ours.lindex("L1", 17) == ref.lindex("L1", 17)
    # Through the RDB and the AOF rewrite; a loaded list takes the server's
    # setting of the moment, as in Redis (L0 is compressed from then on).
    before = ours.lrange("L1", 0, -1)
    ours.config_set("list-compress-depth", 1)
    ours.execute_command("DEBUG", "RELOAD")
    assert ours.lrange("L1", 0, -1) == before
    assert ql_figures(ours, "L0")["ql_compressed"] == "1"
    assert ours.memory_usage("L0") * 2 < plain
    ours.config_set("appendonly", "yes")  # starts a rewrite: the lists go into the AOF's base
    wait_persistence_idle(ours)
    ours.execute_command("DEBUG", "LOADAOF")
    assert ours.lrange("L1", 0, -1) == before
