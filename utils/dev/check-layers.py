#!/usr/bin/python3
"""check-layers.py: the server's modules may include only their own layer
or the layers below it.

A module is a file stem of src/ (conn.c and conn.h are the module "conn");
an edge is an `#include "x.h"` of another module's header.  LAYERS below
is the layer order, bottom first, that docs/development.md's "Layers" draws.
The check fails (exit 1) when

  - a module includes a header of a higher layer (an upward include), or
  - the include graph has a cycle (a strongly connected component of more
    than one module) that is not one of GROUPS (mutual includes inside one
    layer kept on purpose, each with its reason; empty today).

A module missing from LAYERS (a new file) is reported but does not fail
the check: give it a layer in the same commit.  Where a lower layer must
call up, it declares a small hook table that hooks.c fills at start-up
(docs/development.md, "Layers", lists them).

Calls are checked the same way, from the built objects (src/obj/server,
`nm`): module a calls b when a's object refers to a symbol b's defines.
A cycle of calls between modules (a calls b, b calls a, directly or round
a longer circle) fails the check as an include cycle does, unless it is
one of CALL_GROUPS.  The command table (REGISTRARS) takes every handler's
address to register it: its references are not calls and are left out.

Usage: utils/dev/check-layers.py [--src src] [--objects src/obj/server] [--graph]
  --graph    also print every module's layer and includes (for reviewing)
  --objects  where the server's objects are (make builds them there);
             without them the call check fails: build first
"""
import argparse
import collections
import os
import re
import subprocess
import sys

# Bottom first.  A module may include its own layer and the ones above in
# this list.  Keep README's picture in step with this table.
LAYERS = [
    ("base", "state and types every layer sees",
     "version config server oom proc_title thp supervise cpu_affinity command_def object db_entry db_views notify_flags evict_stamp zset stream lazyfree"),
    ("connection", "clients, their buffers, replies",
     "tls_conn tls conn reply io_engine io_uring_engine listeners"),
    ("table", "the command table and its Redis 7.0 metadata",
     "command_meta command_meta_data commands latency_track"),
    ("client services", "per-client features the data layer may tell",
     "pubsub notify tracking monitor client_evict slowlog latency acl_user acl scan"),
    ("data", "the keyspace",
     "keyspace ttl_index t_hash hash_ttl t_set"),
    ("durability", "write stream, RDB, AOF, replication",
     "durability_hooks loading child rdb rdb_stream rdb_load rdb_save aof_manifest aof_encode aof_load aof stream_aof propagate persist repl repl_state repl_backlog repl_diskless "
     "repl_failover repl_info repl_master repl_replica repl_load repl_stream repl_sync_file"),
    ("execution", "what runs or holds commands: eviction, expiry, MULTI, blocking, pause, scripts",
     "evict expire multi blocking pause script_lua script_ldb script script_conv lua_cmsgpack lua_struct lua_cjson lua_bit "
     "function cluster_nodes cluster_config cluster cluster_msg cluster_wire cluster_link cluster_failure cluster_failover "
     "cluster_replica_migration cluster_forget cluster_relay cluster_gossip cluster_bus_internal cluster_bus"),
    ("dispatch", "resolve, check and call a request",
     "dispatch"),
    ("commands", "command handlers and introspection",
     "dump t_string t_list t_zset t_bitmap t_stream t_stream_cg hyperloglog geo sort lcs lolwut keycopy migrate "
     "keyspace_cmds conn_cmds server_cmds shutdown acl_cmds module_cmds command_cmds debug digest memory alloc_advice defrag info "
     "config_rewrite repl_cmds cluster_cmds"),
    ("process", "start-up, cron, the wiring of the hook tables, main()",
     "hooks lifecycle server_main crash selftest"),
]

# Cycles kept on purpose: each inside one layer, with the reason, as
# ({"module", ...}, "why they are one unit").  None today: the last three
# were broken by child.c (the forked child out of persist.c), conn_hooks_t's
# protocol_error (conn.c below reply.c) and script_run_ops_t (the Lua engine
# below script.c, below function.c).  Prefer a hook or moving the shared
# part down a layer to adding one here.
GROUPS = []

# Modules whose references to other modules' functions register them
# rather than call them (a table of handlers); their edges are left out.
REGISTRARS = {
    "commands": "the command table holds the address of every command handler",
}

# Call cycles allowed, each with the reason it is still there; the check
# fails on any other, so none can grow or appear unnoticed.  Empty since
# issue 48 cut the persistence/replication circle (repl_stream.c below
# persistence, listeners for the RDB child's end, the stream codec's
# reader/writer tables, repl_cmds.c).  Cut a new one with a hook table
# (as conn.c's) or by moving the shared part down, not by listing it here.
CALL_GROUPS = []


def read_graph(src):
    files = [f for f in os.listdir(src) if f.endswith((".c", ".h"))]
    headers = {f[:-2] for f in files if f.endswith(".h")}
    edges = collections.defaultdict(set)  # module -> {module}
    where = {}  # (module, module) -> first file that includes it
    modules = set()
    for f in sorted(files):
        m = f[:-2]
        modules.add(m)
        with open(os.path.join(src, f)) as fh:
            text = fh.read()
        for inc in re.findall(r'^\s*#\s*include\s+"([^"/]+)\.h"', text, re.M):
            if inc in headers and inc != m:
                edges[m].add(inc)
                where.setdefault((m, inc), f)
    return modules, edges, where


def sccs(modules, edges):
    """Tarjan's algorithm, iterative (no recursion limit to worry about)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def read_calls(objdir):
    """module -> {module it calls}, and (a, b) -> one symbol a uses of b's,
    from the objects' symbol tables; None when there are no objects."""
    if not os.path.isdir(objdir):
        return None, None
    objs = sorted(f for f in os.listdir(objdir) if f.endswith(".o"))
    if not objs:
        return None, None
    defined, uses = {}, collections.defaultdict(set)
    for f in objs:
        m = f[:-2]
        out = subprocess.run(["nm", "-P", os.path.join(objdir, f)], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            name, kind = parts[0], parts[1]
            if kind == "U":
                uses[m].add(name)
            elif kind in "TDBRGS":  # global text, data, bss, rodata
                defined[name] = m
    calls, why = collections.defaultdict(set), {}
    for m, names in uses.items():
        if m in REGISTRARS:
            continue
        for name in names:
            d = defined.get(name)
            if d and d != m:
                calls[m].add(d)
                why.setdefault((m, d), name)
    return calls, why


def check_calls(objdir, errors):
    """Append an error per call cycle that is not one of CALL_GROUPS;
    returns the cycles found, for the summary."""
    calls, why = read_calls(objdir)
    if calls is None:
        errors.append("no objects in %s: build the server first (make), the call check reads them" % objdir)
        return []
    modules = set(calls) | {d for ds in calls.values() for d in ds}
    comps = [c for c in sccs(modules, calls) if len(c) > 1]
    for c in comps:
        if any(set(c) <= g for g, _ in CALL_GROUPS):
            continue
        cs = set(c)
        links = ["%s -> %s (%s)" % (a, b, why[(a, b)]) for a in c for b in sorted(calls[a]) if b in cs]
        errors.append("call cycle not in CALL_GROUPS: %s; calls: %s" % (" ".join(c), ", ".join(links)))
    return comps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src"))
    ap.add_argument("--objects", default=None)
    ap.add_argument("--graph", action="store_true")
    args = ap.parse_args()
    objdir = args.objects or os.path.join(args.src, "obj", "server")

    layer_of, errors = {}, []
    for i, (name, _, mods) in enumerate(LAYERS):
        for m in mods.split():
            if m in layer_of:
                errors.append("%s is listed in two layers" % m)
            layer_of[m] = i
    modules, edges, where = read_graph(args.src)

    for m in sorted(set(layer_of) - modules):
        errors.append("LAYERS lists %s, which is not in %s" % (m, args.src))
    unplaced = sorted(modules - set(layer_of))

    for a in sorted(edges):
        for b in sorted(edges[a]):
            if a in layer_of and b in layer_of and layer_of[b] > layer_of[a]:
                errors.append("upward include: %s includes %s.h (%s -> %s)" %
                              (where[(a, b)], b, LAYERS[layer_of[a]][0], LAYERS[layer_of[b]][0]))

    comps = [c for c in sccs(modules, edges) if len(c) > 1]
    for c in comps:
        cs = set(c)
        if any(cs <= g for g, _ in GROUPS) and len({layer_of.get(m) for m in c}) == 1:
            continue
        errors.append("include cycle not in GROUPS: %s" % " ".join(c))

    if args.graph:
        for i, (name, what, mods) in enumerate(LAYERS):
            print("%d %s (%s)" % (i, name, what))
            for m in mods.split():
                print("    %-20s -> %s" % (m, " ".join(sorted(edges[m]))))
    print("strongly connected components (modules in a cycle): %s" %
          (", ".join("%d %s" % (len(c), "{" + " ".join(c) + "}") for c in comps) or "none"))
    call_comps = check_calls(objdir, errors)
    print("call cycles (modules calling round a circle): %s" %
          (", ".join("%d %s" % (len(c), "{" + " ".join(c) + "}") for c in call_comps) or "none"))
    for m in unplaced:
        print("warning: %s has no layer in utils/dev/check-layers.py LAYERS (its includes are not checked)" % m)
    for e in errors:
        print("error: " + e)
    if errors:
        print("check-layers: %d error(s); docs/development.md \"Layers\" explains the order and the hook tables" % len(errors))
        return 1
    print("check-layers: every include points down or inside its layer, no call cycle but CALL_GROUPS "
          "(%d modules, %d layers)" % (len(modules), len(LAYERS)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
