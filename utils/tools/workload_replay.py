"""workload_replay.py: read a recorded workload and replay it on a local server.

Used by utils/tools/allocator-shootout --replay (and its tests).  Two recordings:
  - an AOF file (RESP multibulk commands, as appendonly writes them; Redis
    7's "#TS:" annotations are skipped): writes only, no timing; or Redis
    7's `appendonlydir` (parse_aof_dir): its manifest names a base (an AOF,
    or an RDB the caller loads first) and the incr files that follow it;
  - a capture of `redis-cli MONITOR`: one line per command,
    `1701234567.123456 [0 127.0.0.1:52614] "SET" "key" "value"` with
    C-style escapes in the quoted arguments: reads and writes, timed.
parse_file() turns either into a list of Command(line, t, db, argv) and
raises ReplayError naming the file and line where a truncated or corrupt
recording went wrong.

Safety: commands that would reach beyond the data of the test server or
stop it (FLUSHALL, SHUTDOWN, CONFIG, DEBUG, replication, MIGRATE, ACL,
MODULE, SAVE, ...) and commands that would block the replay are skipped and
counted, never sent.  replay() talks only to a loopback address: anything
else is refused before a socket is opened.
"""
import ipaddress
import os
import re
import shlex
import socket
import time
from collections import Counter, namedtuple

Command = namedtuple("Command", "line t db argv")   # argv: list of bytes

# Never sent: they act on the whole server or the machine, not on the data.
SKIPPED = {
    "flushall", "flushdb", "shutdown", "config", "debug", "save", "bgsave", "bgrewriteaof",
    "replicaof", "slaveof", "sync", "psync", "replconf", "migrate", "cluster", "module",
    "acl", "monitor", "failover", "swapdb", "client", "script", "function", "lastsave",
    "latency", "slowlog", "memory", "object", "reset", "quit", "auth", "hello", "readonly",
    "readwrite", "select",   # SELECT is followed through Command.db instead
    "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe", "sunsubscribe",
    "wait", "waitaof", "info", "dbsize", "lolwut", "command",
}
# Would block the connection: replayed workloads must never wait on a key.
BLOCKING = {"blpop", "brpop", "brpoplpush", "blmove", "blmpop", "bzpopmin", "bzpopmax", "bzmpop"}


class ReplayError(Exception):
    """A recording that cannot be read: the message names file and line."""


def skip_reason(argv):
    """None if the command may be replayed, else the name to count it under."""
    name = argv[0].decode("latin-1").lower()
    if name in SKIPPED:
        return name
    if name in BLOCKING or (name in ("xread", "xreadgroup") and
                            any(a.lower() == b"block" for a in argv[1:])):
        return name + " (blocking)"
    return None


# ---- AOF ----------------------------------------------------------------------

def _aof_line(data, pos, path, lineno):
    end = data.find(b"\r\n", pos)
    if end < 0:
        raise ReplayError(f"{path}:{lineno}: truncated (no end of line)")
    return data[pos:end], end + 2


def parse_aof(data, path="<aof>"):
    """RESP multibulk commands; SELECT sets the db of what follows."""
    if data.startswith(b"REDIS"):
        raise ReplayError(f"{path}:1: this is an RDB (or an AOF with an RDB preamble): "
                          "give it with --rdb")
    out, pos, lineno, db = [], 0, 1, 0
    while pos < len(data):
        start_line = lineno
        if data[pos:pos + 1] == b"#":          # Redis 7 annotation, e.g. #TS:1700000000
            _, pos = _aof_line(data, pos, path, lineno)
            lineno += 1
            continue
        head, pos = _aof_line(data, pos, path, lineno)
        lineno += 1
        if not head.startswith(b"*") or not head[1:].isdigit() or int(head[1:]) < 1:
            raise ReplayError(f"{path}:{start_line}: expected '*<count>', got {head[:40]!r}")
        argv = []
        for _ in range(int(head[1:])):
            if pos >= len(data):
                raise ReplayError(f"{path}:{lineno}: truncated inside a command "
                                  f"(started at line {start_line})")
            blen, pos = _aof_line(data, pos, path, lineno)
            lineno += 1
            if not blen.startswith(b"$") or not blen[1:].isdigit():
                raise ReplayError(f"{path}:{lineno - 1}: expected '$<length>', got {blen[:40]!r}")
            n = int(blen[1:])
            if pos + n + 2 > len(data):
                raise ReplayError(f"{path}:{lineno}: truncated argument of {n} bytes "
                                  f"(command started at line {start_line})")
            if data[pos + n:pos + n + 2] != b"\r\n":
                raise ReplayError(f"{path}:{lineno}: argument longer than its ${n}")
            arg = data[pos:pos + n]
            lineno += arg.count(b"\n") + 1
            argv.append(arg)
            pos += n + 2
        if argv[0].lower() == b"select" and len(argv) == 2 and argv[1].isdigit():
            db = int(argv[1])
            continue
        out.append(Command(start_line, None, db, argv))
    return out


# ---- MONITOR --------------------------------------------------------------------

MONITOR_RE = re.compile(rb'^(\d+\.\d+) \[(\d+) ([^\]]*)\] (.*)$')
ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"a": b"\a", b"b": b"\b",
           b'"': b'"', b"\\": b"\\"}


def _monitor_args(text, path, lineno):
    """"SET" "k" "a\\x00b" -> [b'SET', b'k', b'a\\x00b'] (sdscatrepr's escapes)."""
    args, i, n = [], 0, len(text)
    while i < n:
        if text[i:i + 1] == b" ":
            i += 1
            continue
        if text[i:i + 1] != b'"':
            raise ReplayError(f"{path}:{lineno}: expected a quoted argument at column {i + 1}")
        i += 1
        arg = bytearray()
        while True:
            if i >= n:
                raise ReplayError(f"{path}:{lineno}: unterminated quoted argument")
            ch = text[i:i + 1]
            if ch == b'"':
                i += 1
                break
            if ch == b"\\":
                nxt = text[i + 1:i + 2]
                if nxt == b"x":
                    hx = text[i + 2:i + 4]
                    if len(hx) != 2 or not re.fullmatch(rb"[0-9a-fA-F]{2}", hx):
                        raise ReplayError(f"{path}:{lineno}: bad \\x escape at column {i + 1}")
                    arg.append(int(hx, 16))
                    i += 4
                    continue
                if nxt in ESCAPES:
                    arg += ESCAPES[nxt]
                    i += 2
                    continue
                raise ReplayError(f"{path}:{lineno}: bad escape at column {i + 1}")
            arg += ch
            i += 1
        args.append(bytes(arg))
    if not args:
        raise ReplayError(f"{path}:{lineno}: no command")
    return args


def parse_monitor(data, path="<monitor>"):
    """redis-cli MONITOR output; the leading "OK" line is allowed."""
    out = []
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines and not lines[-1].rstrip().endswith(b'"'):
        raise ReplayError(f"{path}:{len(lines)}: truncated last line")
    for lineno, raw in enumerate(lines, 1):
        line = raw.rstrip(b"\r")
        if not line or (lineno == 1 and line == b"OK"):
            continue
        m = MONITOR_RE.match(line)
        if not m:
            raise ReplayError(f"{path}:{lineno}: not a MONITOR line: {line[:60]!r}")
        out.append(Command(lineno, float(m.group(1)), int(m.group(2)),
                           _monitor_args(m.group(4), path, lineno)))
    for a, b in zip(out, out[1:]):
        if b.t < a.t:
            raise ReplayError(f"{path}:{b.line}: time goes backwards ({b.t} after {a.t})")
    return out


# ---- appendonlydir ------------------------------------------------------------

def read_manifest(dirpath):
    """Redis 7's appendonlydir: (base path or None, incr paths in sequence
    order), from its one *.manifest file; history files are left out."""
    names = sorted(f for f in os.listdir(dirpath) if f.endswith(".manifest"))
    if len(names) != 1:
        raise ReplayError(f"{dirpath}: expected one *.manifest file (an appendonlydir), found {len(names)}")
    mpath = os.path.join(dirpath, names[0])
    base, incrs = None, []
    with open(mpath, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    for lineno, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            words = shlex.split(line)
        except ValueError as e:
            raise ReplayError(f"{mpath}:{lineno}: {e}") from None
        fields = dict(zip(words[::2], words[1::2]))
        if len(words) % 2 or not {"file", "seq", "type"} <= fields.keys() or not fields["seq"].isdigit():
            raise ReplayError(f"{mpath}:{lineno}: not a manifest line: {line[:60]!r}")
        name, kind = fields["file"], fields["type"]
        if "/" in name:
            raise ReplayError(f"{mpath}:{lineno}: a file name with a path: {name!r}")
        path = os.path.join(dirpath, name)
        if kind == "b":
            if base:
                raise ReplayError(f"{mpath}:{lineno}: a second base file")
            base = path
        elif kind == "i":
            incrs.append((int(fields["seq"]), path))
        elif kind != "h":
            raise ReplayError(f"{mpath}:{lineno}: unknown file type {kind!r}")
    for path in ([base] if base else []) + [p for _, p in incrs]:
        if not os.path.isfile(path):
            raise ReplayError(f"{mpath}: {os.path.basename(path)} is listed but missing")
    return base, [p for _, p in sorted(incrs)]


def parse_aof_dir(dirpath):
    """(RDB base path or None, commands): a base that is an AOF is read
    like the incr files after it; an RDB base is returned for the caller
    to load before the commands."""
    base, incrs = read_manifest(dirpath)
    rdb, out = None, []
    for path in ([base] if base else []) + incrs:
        with open(path, "rb") as f:
            data = f.read()
        if path == base and data.startswith(b"REDIS"):
            rdb = path
        else:
            out += parse_aof(data, path)
    return rdb, out


def parse_file(path):
    """Either format, told apart by the first byte: '*' or '#' is an AOF."""
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        raise ReplayError(f"{path}:1: empty file")
    if data[:1] in (b"*", b"#") or data.startswith(b"REDIS"):
        return "aof", parse_aof(data, path)
    return "monitor", parse_monitor(data, path)


# ---- replay ----------------------------------------------------------------------

def encode(argv):
    out = [b"*%d\r\n" % len(argv)]
    for a in argv:
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class ReplyReader:
    """Counts RESP replies on a socket (their content is not needed, only
    whether they were errors)."""

    def __init__(self, sock):
        self.sock, self.buf, self.pos = sock, b"", 0

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf = self.buf[self.pos:] + chunk
        self.pos = 0

    def _line(self):
        while True:
            end = self.buf.find(b"\r\n", self.pos)
            if end >= 0:
                line, self.pos = self.buf[self.pos:end], end + 2
                return line
            self._fill()

    def read(self):
        """One whole reply; True if it was an error."""
        line = self._line()
        t = line[:1]
        if t in (b"$", b"="):
            n = int(line[1:])
            if n >= 0:
                while len(self.buf) - self.pos < n + 2:
                    self._fill()
                self.pos += n + 2
            return False
        if t in (b"*", b"%", b"~", b">"):
            n = int(line[1:])
            for _ in range(max(n, 0) * (2 if t == b"%" else 1)):
                self.read()
            return False
        return t == b"-"


def check_loopback(host):
    if not ipaddress.ip_address(host).is_loopback:
        raise ValueError(f"refusing to replay a workload to {host}: only loopback servers")


def replay(commands, port, host="127.0.0.1", paced=False, batch=64, deadline=None):
    """Sends the commands (skipping the unsafe ones) over one connection.
    paced: keep the recorded gaps between commands (MONITOR captures);
    otherwise pipelines of `batch` commands.  Returns a dict of counts:
    sent, errors, skipped (Counter by name), seconds."""
    check_loopback(host)
    skipped, sent, errors = Counter(), 0, 0
    sock = socket.create_connection((host, port), timeout=60)
    reader = ReplyReader(sock)
    db, pending, out = 0, 0, []
    t_start = time.monotonic()
    t0 = commands[0].t if commands and commands[0].t is not None else None

    def flush():
        nonlocal pending, errors, out
        if out:
            sock.sendall(b"".join(out))
            out = []
        for _ in range(pending):
            errors += reader.read()
        pending = 0

    try:
        for cmd in commands:
            why = skip_reason(cmd.argv)
            if why:
                skipped[why] += 1
                continue
            if cmd.db != db:
                out.append(encode([b"SELECT", str(cmd.db).encode()]))
                pending += 1
                db = cmd.db
            if paced and t0 is not None and cmd.t is not None:
                wait = (cmd.t - t0) - (time.monotonic() - t_start)
                if wait > 0:
                    flush()
                    time.sleep(wait)
            out.append(encode(cmd.argv))
            pending += 1
            sent += 1
            if pending >= batch or paced:
                flush()
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError("replay passed its time cap")
        flush()
    finally:
        sock.close()
    return {"sent": sent, "errors": errors, "skipped": skipped,
            "seconds": time.monotonic() - t_start}
