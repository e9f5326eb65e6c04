#!/usr/bin/python3
"""gen-command-meta.py: regenerate src/command_meta_data.c from Redis 7.4.1.

The command metadata (arity, flags, key positions, key specs, tips, ACL
categories, docs, history and argument trees) is interface data: clients
and redis-cli read it and expect Redis's exact values.  Rather than retype
it, this script starts Redis 7.4.1 (built outside the tree by
utils/dev/redis74-ref.sh; 7.0.15, Debian's, is still accepted) on a free loopback
port, asks it `COMMAND` and `COMMAND DOCS` over RESP3 (which keeps the
reply types: sets, maps, simple strings), checks that every value has a
shape the C side knows how to serve, and writes the table as plain C data.

Usage: utils/dev/gen-command-meta.py --redis "$(utils/dev/redis74-ref.sh)" [--out FILE]

The output is committed: `make` must need only the compiler, so nothing is
generated at build time.  Re-run after changing this script and review the
diff of the data file like any other change.
"""
import argparse
import os
import re
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
import benchlib  # noqa: E402

ROOT = benchlib.ROOT

# Orders in which Redis 7.0 prints each kind of flag; the C side prints in
# table order, so each observed list must follow these orders (checked).
CMD_FLAGS = ["write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript", "blocking",
             "loading", "stale", "skip_monitor", "skip_slowlog", "asking", "fast", "no_auth",
             "may_replicate", "no_mandatory_keys", "no_async_loading", "no_multi", "movablekeys",
             "allow_busy"]
CMD_FLAG_MACRO = {f: "CMD_" + f.upper() for f in CMD_FLAGS}
CMD_FLAG_MACRO["readonly"] = "CMD_READONLY"
CMD_FLAG_MACRO["movablekeys"] = "CMD_MOVABLE_KEYS"
ACL_CATS = ["keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
            "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
            "dangerous", "connection", "transaction", "scripting"]
KEY_FLAGS = ["RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key",
             "incomplete", "variable_flags"]
ARG_TYPES = ["string", "integer", "double", "key", "pattern", "unix-time", "pure-token",
             "oneof", "block"]
ARG_FLAGS = ["optional", "multiple", "multiple_token"]
DOC_FLAGS = ["deprecated", "syscmd"]
ARG_FIELDS = ["name", "type", "display_text", "key_spec_index", "token", "since", "flags", "deprecated_since",
              "arguments"]
DOC_FIELDS = ["summary", "since", "group", "complexity", "doc_flags", "deprecated_since",
              "replaced_by", "history", "arguments", "subcommands"]


# ----------------------------------------------------------------- RESP3

class Resp3:
    """A minimal RESP3 reader that keeps each value's type."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("server closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return ("simple", rest.decode())
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b":":
            return ("int", int(rest))
        if t == b"$":
            n = int(rest)
            while len(self.buf) < n + 2:
                self.buf += self.sock.recv(1 << 20)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return ("bulk", data.decode())
        if t in (b"*", b"~"):
            return ("array" if t == b"*" else "set", [self.read() for _ in range(int(rest))])
        if t == b"%":
            return ("map", [(self.read(), self.read()) for _ in range(int(rest))])
        raise ValueError("unexpected reply %r" % line)

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a.encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        return self.read()


def fetch(redis_server):
    srv = benchlib.Server(redis_server, ["--appendonly", "no"], log=False, timeout=10, prefix="gen-meta-")
    try:
        conn = Resp3(srv.port)
        hello = conn.call("HELLO", "3")
        version = dict((k[1], v[1]) for k, v in hello[1])["version"]
        info = conn.call("COMMAND")
        docs = conn.call("COMMAND", "DOCS")
        conn.sock.close()
        return version, info, docs
    finally:
        srv.remove()


# ----------------------------------------------------------------- checks

def expect(cond, what):
    if not cond:
        raise SystemExit("gen-command-meta: unexpected shape: " + what)


def ordered_names(value, order, what):
    """A set of simple strings -> its names, checked against order."""
    expect(value[0] == "set", what + " is not a set")
    names = []
    for t, name in value[1]:
        expect(t == "simple" and name in order, "%s has %r" % (what, name))
        names.append(name)
    idx = [order.index(n) for n in names]
    expect(idx == sorted(idx), "%s out of order: %r" % (what, names))
    return names


def as_map(value, what):
    expect(value[0] == "map", what + " is not a map")
    out = []
    for k, v in value[1]:
        expect(k[0] == "bulk", what + " key is not bulk")
        out.append((k[1], v))
    return out


def fields_in_order(pairs, order, what):
    keys = [k for k, _ in pairs]
    expect(all(k in order for k in keys), "%s has fields %r" % (what, keys))
    idx = [order.index(k) for k in keys]
    expect(idx == sorted(idx), "%s fields out of order: %r" % (what, keys))
    return dict(pairs)


def bulk(v, what):
    expect(v[0] == "bulk", what + " is not bulk")
    return v[1]


def integer(v, what):
    expect(v[0] == "int", what + " is not an integer")
    return v[1]


# ----------------------------------------------------------------- C output

def cstr(s):
    if s is None:
        return "NULL"
    out = []
    for ch in s.encode():
        if ch in (0x22, 0x5c):
            out.append("\\" + chr(ch))
        elif 0x20 <= ch < 0x7f:
            out.append(chr(ch))
        else:
            out.append("\\%03o" % ch)
    return '"' + "".join(out) + '"'


def ident(fullname):
    name = re.sub(r"[^A-Za-z0-9]", "_", fullname)
    return name


def bits(names, table, prefix):
    if not names:
        return "0"
    return " | ".join(prefix + re.sub(r"[^A-Za-z0-9]", "_", n).upper() for n in names)


class Writer:
    def __init__(self):
        self.blocks = []
        self.used = set()

    def unique(self, base):
        name = base
        n = 2
        while name in self.used:
            name = "%s_%d" % (base, n)
            n += 1
        self.used.add(name)
        return name

    def args(self, base, value, what):
        expect(value[0] == "array", what + " is not an array")
        rows = []
        for i, item in enumerate(value[1]):
            f = fields_in_order(as_map(item, what), ARG_FIELDS, what)
            name = bulk(f["name"], what + " name")
            typ = bulk(f["type"], what + " type")
            expect(typ in ARG_TYPES, "arg type %r" % typ)
            flags = ordered_names(f["flags"], ARG_FLAGS, what + " flags") if "flags" in f else []
            sub, nsub = "NULL", 0
            if "arguments" in f:
                sub = self.args(base + "_" + ident(name), f["arguments"], what + "." + name)
                nsub = len(f["arguments"][1])
            ksi = integer(f["key_spec_index"], "key_spec_index") if "key_spec_index" in f else -1
            rows.append("    {%s, ARG_TYPE_%s, %d, %s, %s, %s, %s, %s, %d, %s}," % (
                cstr(name), re.sub("-", "_", typ).upper(), ksi, bits(flags, ARG_FLAGS, "ARG_FLAG_"),
                cstr(bulk(f["token"], "token") if "token" in f else None),
                cstr(bulk(f["since"], "since") if "since" in f else None),
                cstr(bulk(f["deprecated_since"], "deprecated_since") if "deprecated_since" in f else None),
                sub, nsub, cstr(bulk(f["display_text"], "display_text") if "display_text" in f else None)))
        arr = self.unique(base + "_args")
        self.blocks.append("static const cmd_arg_t %s[] = {\n%s\n};\n" % (arr, "\n".join(rows)))
        return arr

    def key_specs(self, base, value, what):
        expect(value[0] == "set", what + " key specs are not a set")
        rows = []
        for spec in value[1]:
            f = fields_in_order(as_map(spec, what), ["notes", "flags", "begin_search", "find_keys"], what)
            notes = bulk(f["notes"], "notes") if "notes" in f else None
            flags = ordered_names(f["flags"], KEY_FLAGS, what + " key flags")
            bs = fields_in_order(as_map(f["begin_search"], what), ["type", "spec"], what)
            fk = fields_in_order(as_map(f["find_keys"], what), ["type", "spec"], what)
            bst, bss = bulk(bs["type"], "bs type"), dict(as_map(bs["spec"], "bs spec"))
            fkt, fks = bulk(fk["type"], "fk type"), dict(as_map(fk["spec"], "fk spec"))
            if bst == "index":
                expect(list(bss) == ["index"], "index spec")
                begin = "KS_BEGIN_INDEX, %d, NULL" % integer(bss["index"], "index")
            elif bst == "keyword":
                expect(list(bss) == ["keyword", "startfrom"], "keyword spec")
                begin = "KS_BEGIN_KEYWORD, %d, %s" % (integer(bss["startfrom"], "startfrom"),
                                                       cstr(bulk(bss["keyword"], "keyword")))
            else:
                expect(bst == "unknown" and not bss, "begin_search type %r" % bst)
                begin = "KS_BEGIN_UNKNOWN, 0, NULL"
            if fkt == "range":
                expect(list(fks) == ["lastkey", "keystep", "limit"], "range spec")
                find = "KS_FIND_RANGE, %d, %d, %d" % (integer(fks["lastkey"], "lastkey"),
                                                      integer(fks["keystep"], "keystep"),
                                                      integer(fks["limit"], "limit"))
            elif fkt == "keynum":
                expect(list(fks) == ["keynumidx", "firstkey", "keystep"], "keynum spec")
                find = "KS_FIND_KEYNUM, %d, %d, %d" % (integer(fks["keynumidx"], "keynumidx"),
                                                       integer(fks["firstkey"], "firstkey"),
                                                       integer(fks["keystep"], "keystep"))
            else:
                expect(fkt == "unknown" and not fks, "find_keys type %r" % fkt)
                find = "KS_FIND_UNKNOWN, 0, 0, 0"
            rows.append("    {%s, %s, %s, %s}," % (cstr(notes), bits(flags, KEY_FLAGS, "KSF_"), begin, find))
        arr = self.unique(base + "_keyspecs")
        self.blocks.append("static const cmd_key_spec_t %s[] = {\n%s\n};\n" % (arr, "\n".join(rows)))
        return arr

    def strings(self, base, suffix, items):
        arr = self.unique(base + suffix)
        self.blocks.append("static const char *const %s[] = {%s};\n" % (arr, ", ".join(cstr(s) for s in items)))
        return arr

    def history(self, base, value):
        expect(value[0] == "set", "history is not a set")
        rows = []
        for h in value[1]:
            expect(h[0] == "array" and len(h[1]) == 2, "history entry")
            rows.append("    {%s, %s}," % (cstr(bulk(h[1][0], "version")), cstr(bulk(h[1][1], "text"))))
        arr = self.unique(base + "_history")
        self.blocks.append("static const cmd_history_t %s[] = {\n%s\n};\n" % (arr, "\n".join(rows)))
        return arr


def collect(info, docs):
    """fullname -> (info entry values, docs fields) for commands and subcommands."""
    expect(info[0] == "array" and docs[0] == "map", "top-level replies")
    infos = {}

    def add_info(entry):
        expect(entry[0] == "array" and len(entry[1]) == 10, "COMMAND entry")
        v = entry[1]
        infos[bulk(v[0], "name")] = v
        for sub in v[9][1]:
            add_info(sub)

    for entry in info[1]:
        add_info(entry)
    docmap = {}

    def add_doc(name, value):
        f = fields_in_order(as_map(value, name), DOC_FIELDS, "docs of " + name)
        docmap[name] = f
        if "subcommands" in f:
            for k, v in f["subcommands"][1]:
                add_doc(bulk(k, "subcommand name"), v)

    for k, v in docs[1]:
        add_doc(bulk(k, "command name"), v)
    expect(set(infos) == set(docmap), "COMMAND and COMMAND DOCS name different commands")
    return infos, docmap


def generate(version, info, docs):
    infos, docmap = collect(info, docs)
    w = Writer()
    rows = []
    for name in sorted(infos):
        v, d = infos[name], docmap[name]
        base = ident(name)
        flags = ordered_names(v[2], CMD_FLAGS, name + " flags")
        cats = ordered_names(v[6], ["@" + c for c in ACL_CATS], name + " categories")
        tips = [bulk(t, "tip") for t in v[7][1]]
        expect(v[7][0] == "set", "tips of " + name)
        nspecs = len(v[8][1])
        specs = w.key_specs(base, v[8], name) if nspecs else "NULL"
        tips_arr = w.strings(base, "_tips", tips) if tips else "NULL"
        hist, nhist = "NULL", 0
        if "history" in d:
            hist, nhist = w.history(base, d["history"]), len(d["history"][1])
        args, nargs = "NULL", 0
        if "arguments" in d:
            args, nargs = w.args(base, d["arguments"], name), len(d["arguments"][1])
        docflags = ordered_names(d["doc_flags"], DOC_FLAGS, name + " doc_flags") if "doc_flags" in d else []
        get = lambda k: cstr(bulk(d[k], k)) if k in d else "NULL"
        rows.append("\n".join([
            "    {.fullname = %s, .arity = %d, .flags = %s," % (cstr(name), integer(v[1], "arity"),
                                                               bits(flags, CMD_FLAGS, "CMD_").replace(
                                                                   "CMD_MOVABLEKEYS", "CMD_MOVABLE_KEYS")),
            "     .first_key = %d, .last_key = %d, .key_step = %d," % (integer(v[3], "first"),
                                                                     integer(v[4], "last"),
                                                                     integer(v[5], "step")),
            "     .acl_categories = %s," % bits([c[1:] for c in cats], ACL_CATS, "ACL_CAT_"),
            "     .tips = %s, .ntips = %d, .key_specs = %s, .nkey_specs = %d," % (tips_arr, len(tips), specs,
                                                                              nspecs),
            "     .summary = %s," % get("summary"),
            "     .since = %s, .group = %s," % (get("since"), get("group")),
            "     .complexity = %s," % get("complexity"),
            "     .doc_flags = %s, .deprecated_since = %s, .replaced_by = %s," % (
                bits(docflags, DOC_FLAGS, "DOC_FLAG_"), get("deprecated_since"), get("replaced_by")),
            "     .history = %s, .nhistory = %d, .args = %s, .nargs = %d}," % (hist, nhist, args, nargs)]))
    header = """/* command_meta_data.c: GENERATED by utils/dev/gen-command-meta.py from Redis %s.
 *
 * Do not edit by hand: re-run the script (it starts a Redis 7.4.1 built by
 * utils/dev/redis74-ref.sh on loopback, reads COMMAND and COMMAND DOCS over
 * RESP3 and writes this file).
 * The data is interface data that clients and redis-cli compare with
 * Redis's, so it is taken from Redis rather than retyped; it is committed
 * as C because `make` must need nothing but the compiler.  One row per
 * command and subcommand (%d), sorted by full name; command_meta.c serves
 * it.  Commands without a handler here stay out of COMMAND's replies. */
#include "command_meta.h"

#include <stddef.h>

""" % (version, len(rows))
    return (header + "\n".join(w.blocks) + "\nconst cmd_meta_t cmd_meta_table[] = {\n" + "\n".join(rows) +
            "\n};\n\nconst size_t cmd_meta_count = sizeof(cmd_meta_table) / sizeof(cmd_meta_table[0]);\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--redis", default="/usr/bin/redis-server")
    ap.add_argument("--out", default=os.path.join(ROOT, "src", "command_meta_data.c"))
    a = ap.parse_args()
    version, info, docs = fetch(a.redis)
    expect(version in ("7.0.15", "7.4.1"), "expected Redis 7.4.1 (or 7.0.15), got " + version)
    text = generate(version, info, docs)
    with open(a.out, "w") as f:
        f.write(text)
    print("gen-command-meta: wrote %s" % a.out, file=sys.stderr)


if __name__ == "__main__":
    main()
