/* function.c: FUNCTION LOAD/DELETE/FLUSH/LIST/STATS/DUMP/RESTORE/KILL,
 * FCALL, FCALL_RO, and functions in the RDB (see function.h).
 *
 * A library is its code (starting "#!lua name=<lib>"); loading it runs
 * the code once in the load environment, where redis.register_function
 * records each function (name, callback, flags, description) into the
 * library being built.  Only when the whole code ran and registered at
 * least one function, with no name taken by another library, does the
 * library replace any old one of the same name: a failed load changes
 * nothing.  Function names are global across libraries.
 *
 * Persistence: the RDB and FUNCTION DUMP hold each library's code (opcode
 * 245, then the code as an RDB string); loading runs the code again.  A
 * DUMP payload ends with the RDB version (2 bytes, little endian) and a
 * CRC-64 of everything before it, as in Redis's DUMP format. */
#include "function.h"

#include <lauxlib.h>
#include <stdio.h>
#include <string.h>

#include "crc64.h"
#include "log.h"
#include "lzf.h"
#include "rdb.h"
#include "reply.h"
#include "script.h"
#include "util.h"

#define LOAD_TIMEOUT_MS 500

typedef struct fn_lib fn_lib;

typedef struct fn_def {
    sds name;
    sds desc;  /* NULL if none */
    int ref;   /* callback in the Lua registry */
    int flags; /* SCRIPT_FLAG_* */
    fn_lib *lib;
} fn_def;

struct fn_lib {
    sds name;
    sds code;
    fn_def **fns;
    int nfns, cap;
};

struct functions {
    lua_State *L;
    dict *libs; /* name -> fn_lib */
    dict *fns;  /* function name -> fn_def (owned by its library) */
    size_t code_bytes;
    fn_lib *loading; /* the library being built by FUNCTION LOAD */
    long long load_start_ms;
};

#define F(srv) ((srv)->scripting->functions)

static void lib_free(fn_lib *lib, lua_State *L) {
    if (!lib) return;
    for (int i = 0; i < lib->nfns; i++) {
        if (L) luaL_unref(L, LUA_REGISTRYINDEX, lib->fns[i]->ref);
        sds_free(lib->fns[i]->name);
        sds_free(lib->fns[i]->desc);
        zfree(lib->fns[i]);
    }
    zfree(lib->fns);
    sds_free(lib->name);
    sds_free(lib->code);
    zfree(lib);
}

/* Function names are case-insensitive (FCALL TEST runs a function
 * registered as "test"), library names are not: both as in Redis 7.0. */
static dict_type libs_type = {dict_sds_hash, dict_sds_eq, NULL, dict_sds_free, NULL, false};
static dict_type fns_type = {dict_sds_hash_nocase, dict_sds_eq_nocase, NULL, dict_sds_free, NULL, false};

static bool valid_name(const char *p, size_t len) {
    if (len == 0) return false;
    for (size_t i = 0; i < len; i++) {
        char ch = p[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_')) return false;
    }
    return true;
}

/* ------------------------------------------------------------ register */

static int reg_fail(lua_State *L, const char *msg) {
    lua_newtable(L);
    lua_pushliteral(L, "err");
    lua_pushstring(L, msg);
    lua_rawset(L, -3);
    return lua_error(L);
}

static functions_t *fns_of(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, "__rl_functions");
    functions_t *f = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return f;
}

static int parse_flags(lua_State *L, int idx, int *flags) {
    *flags = 0;
    if (lua_isnil(L, idx)) return 0;
    if (!lua_istable(L, idx)) return -1;
    for (int i = 1;; i++) {
        lua_rawgeti(L, idx, i);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            return 0;
        }
        int f = lua_isstring(L, -1) ? script_flag_from_name(lua_tostring(L, -1)) : -1;
        lua_pop(L, 1);
        if (f < 0) return -1;
        *flags |= f;
    }
}

/* redis.register_function(name, callback) or
 * redis.register_function{function_name=, callback=, flags=, description=} */
static int l_register_function(lua_State *L) {
    functions_t *F = fns_of(L);
    fn_lib *lib = F ? F->loading : NULL;
    if (!lib) return reg_fail(L, "ERR redis.register_function can only be called on FUNCTION LOAD command");
    int flags = 0;
    const char *desc = NULL;
    size_t desclen = 0;
    int argc = lua_gettop(L), name_idx, cb_idx;
    if (argc == 1 && lua_istable(L, 1)) {
        lua_pushnil(L);
        while (lua_next(L, 1)) {
            lua_pop(L, 1);
            const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
            if (strcmp(k, "function_name") && strcmp(k, "callback") && strcmp(k, "flags") && strcmp(k, "description"))
                return reg_fail(L, "ERR unknown argument given to redis.register_function");
        }
        lua_getfield(L, 1, "function_name"); /* 2 */
        lua_getfield(L, 1, "callback");      /* 3 */
        lua_getfield(L, 1, "flags");         /* 4 */
        lua_getfield(L, 1, "description");   /* 5 */
        name_idx = 2;
        cb_idx = 3;
        if (lua_isnil(L, 2)) return reg_fail(L, "ERR redis.register_function must get a function name argument");
        if (lua_isnil(L, 3)) return reg_fail(L, "ERR redis.register_function must get a callback argument");
        if (lua_type(L, 2) != LUA_TSTRING)
            return reg_fail(L, "ERR function_name argument given to redis.register_function must be a string");
        if (!lua_isfunction(L, 3))
            return reg_fail(L, "ERR callback argument given to redis.register_function must be a function");
        if (!lua_isnil(L, 4) && !lua_istable(L, 4))
            return reg_fail(L, "ERR flags argument to redis.register_function must be a table representing function flags");
        if (parse_flags(L, 4, &flags) != 0) return reg_fail(L, "ERR unknown flag given");
        if (!lua_isnil(L, 5)) {
            if (!lua_isstring(L, 5)) return reg_fail(L, "ERR description argument given to redis.register_function must be a string");
            desc = lua_tolstring(L, 5, &desclen);
        }
    } else if (argc == 1) {
        return reg_fail(L, "ERR calling redis.register_function with a single argument is only applicable to Lua table "
                           "(representing named arguments).");
    } else if (argc == 2) {
        name_idx = 1;
        cb_idx = 2;
        if (!lua_isstring(L, 1)) return reg_fail(L, "ERR first argument to redis.register_function must be a string");
        if (!lua_isfunction(L, 2)) return reg_fail(L, "ERR second argument to redis.register_function must be a function");
    } else {
        return reg_fail(L, "ERR wrong number of arguments to redis.register_function");
    }
    size_t nlen;
    const char *name = lua_tolstring(L, name_idx, &nlen);
    if (!valid_name(name, nlen))
        /* (Redis 7.0 says "Library names" here too) */
        return reg_fail(L, "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long");
    for (int i = 0; i < lib->nfns; i++)
        if (sds_len(lib->fns[i]->name) == nlen && !memcmp(lib->fns[i]->name, name, nlen))
            return reg_fail(L, "ERR Function already exists in the library");
    fn_def *fd = zcalloc(sizeof(*fd));
    fd->name = sds_newlen(name, nlen);
    fd->desc = desc ? sds_newlen(desc, desclen) : NULL;
    fd->flags = flags;
    fd->lib = lib;
    lua_pushvalue(L, cb_idx);
    fd->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    if (lib->nfns == lib->cap) {
        lib->cap = lib->cap ? lib->cap * 2 : 4;
        lib->fns = zrealloc(lib->fns, sizeof(fn_def *) * (size_t)lib->cap);
    }
    lib->fns[lib->nfns++] = fd;
    return 0;
}

static void load_timeout_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    functions_t *F = fns_of(L);
    if (F && util_monotonic_us() / 1000 - F->load_start_ms > LOAD_TIMEOUT_MS) {
        lua_sethook(L, load_timeout_hook, LUA_MASKLINE, 0);
        reg_fail(L, "ERR FUNCTION LOAD timeout");
    }
}

/* ------------------------------------------------------------ lifecycle */

static void state_new(functions_t *F, server_t *srv) {
    F->L = slua_new(srv, l_register_function);
    lua_pushlightuserdata(F->L, F);
    lua_setfield(F->L, LUA_REGISTRYINDEX, "__rl_functions");
    F->libs = dict_create(&libs_type);
    F->fns = dict_create(&fns_type);
    F->code_bytes = 0;
}

static void state_free(functions_t *F) {
    dict_iter it;
    dict_entry *de;
    dict_iter_init(&it, F->libs, false);
    while ((de = dict_next(&it))) lib_free(dict_get_val(de), NULL);
    dict_iter_release(&it);
    dict_release(F->libs);
    dict_release(F->fns);
    slua_free(F->L);
}

void functions_init(server_t *srv) {
    functions_t *F = zcalloc(sizeof(*F));
    srv->scripting->functions = F;
    state_new(F, srv);
}

void functions_free(server_t *srv) {
    if (!srv->scripting) return; /* start-up stopped before scripting_init */
    functions_t *F = F(srv);
    if (!F) return;
    state_free(F);
    zfree(F);
    srv->scripting->functions = NULL;
}

void functions_flush(server_t *srv) {
    functions_t *F = F(srv);
    state_free(F);
    state_new(F, srv);
}

size_t functions_count(server_t *srv) { return F(srv) ? dict_size(F(srv)->fns) : 0; }
size_t functions_library_count(server_t *srv) { return F(srv) ? dict_size(F(srv)->libs) : 0; }
size_t functions_vm_memory(server_t *srv) { return F(srv) ? slua_used_memory(F(srv)->L) : 0; }

size_t functions_overhead(server_t *srv) {
    functions_t *F = F(srv);
    if (!F) return 0;
    return F->code_bytes + dict_mem_usage(F->libs) + dict_mem_usage(F->fns) +
           dict_size(F->fns) * sizeof(fn_def) + dict_size(F->libs) * sizeof(fn_lib);
}

/* ------------------------------------------------------------ loading */

static void unlink_lib(functions_t *F, fn_lib *lib) {
    for (int i = 0; i < lib->nfns; i++) dict_delete(F->fns, lib->fns[i]->name);
    F->code_bytes -= sds_len(lib->code);
    dict_delete(F->libs, lib->name);
}

static void link_lib(functions_t *F, fn_lib *lib) {
    for (int i = 0; i < lib->nfns; i++) dict_add(F->fns, sds_dup(lib->fns[i]->name), lib->fns[i]);
    F->code_bytes += sds_len(lib->code);
    dict_add(F->libs, sds_dup(lib->name), lib);
}

/* Parse "#!<engine> name=<lib> ..." */
static sds parse_meta(const char *code, size_t len, sds *name, size_t *body_off) {
    if (len < 2 || code[0] != '#' || code[1] != '!') return sds_new("Missing library metadata");
    const char *nl = memchr(code, '\n', len);
    if (!nl) return sds_new("Invalid library metadata");
    *body_off = (size_t)(nl - code);
    /* Split as Redis splits it: the first word is "#!" and the engine's
     * name ("#! name=x" names the engine ""), the others name=<lib>. */
    sds line = sds_newlen(code, *body_off);
    int argc = 0;
    sds *parts = sds_splitargs(line, &argc);
    sds_free(line);
    if (!parts || argc == 0) {
        if (parts) sds_free_splitres(parts, argc);
        return sds_new("Invalid library metadata");
    }
    sds err = NULL;
    for (int i = 1; i < argc && !err; i++) {
        if (strncasecmp(parts[i], "name=", 5) != 0)
            err = sds_catprintf(sds_empty(), "Invalid metadata value given: %s", parts[i]);
        else if (*name)
            err = sds_new("Invalid metadata value, name argument was given multiple times");
        else
            *name = sds_new(parts[i] + 5);
    }
    if (!err && !*name) err = sds_new("Library name was not given");
    if (!err && !valid_name(*name, sds_len(*name)))
        err = sds_new("Library names can only contain letters, numbers, or underscores(_) and must be at least one character long");
    if (!err && strcasecmp(parts[0] + 2, "lua"))
        err = sds_catprintf(sds_empty(), "Engine '%s' not found", parts[0] + 2);
    sds_free_splitres(parts, argc);
    return err;
}

/* Run a library's code (its metadata line parsed: name, body at off) into
 * a new library that nothing links yet: NULL and *out, or the error (name
 * is taken either way). */
static sds run_library(server_t *srv, sds name, const char *code, size_t len, size_t off, fn_lib **out) {
    functions_t *F = F(srv);
    fn_lib *lib = zcalloc(sizeof(*lib));
    lib->name = name;
    lib->code = sds_newlen(code, len);
    F->loading = lib;
    F->load_start_ms = util_monotonic_us() / 1000;
    sds err = slua_run_library(F->L, code + off, len - off, load_timeout_hook);
    F->loading = NULL;
    if (!err && lib->nfns == 0) err = sds_new("No functions registered");
    if (err) {
        lib_free(lib, F->L);
        return err;
    }
    *out = lib;
    return NULL;
}

/* The name of one of lib's functions that a linked library already uses,
 * or NULL; a linked library that goes away (goes(linked, arg) true; no
 * goes: none does) does not count. */
static const char *taken_function(functions_t *F, const fn_lib *lib, bool (*goes)(const fn_lib *, void *), void *arg) {
    for (int i = 0; i < lib->nfns; i++) {
        fn_def *other = dict_fetch_value(F->fns, lib->fns[i]->name);
        if (other && !(goes && goes(other->lib, arg))) return lib->fns[i]->name;
    }
    return NULL;
}

static bool is_lib(const fn_lib *lib, void *arg) { return lib == arg; }

/* Load one library's code; NULL on success (*libname set, caller frees),
 * else the error text. */
static sds load_library(server_t *srv, const char *code, size_t len, bool replace, sds *libname) {
    functions_t *F = F(srv);
    sds name = NULL;
    size_t off = 0;
    sds err = parse_meta(code, len, &name, &off);
    if (err) {
        sds_free(name);
        return err;
    }
    fn_lib *old = dict_fetch_value(F->libs, name);
    if (old && !replace) {
        err = sds_catprintf(sds_empty(), "Library '%s' already exists", name);
        sds_free(name);
        return err;
    }
    fn_lib *lib;
    if ((err = run_library(srv, name, code, len, off, &lib))) return err;
    const char *taken = taken_function(F, lib, is_lib, old);
    if (taken) {
        err = sds_catprintf(sds_empty(), "Function %s already exists", taken);
        lib_free(lib, F->L);
        return err;
    }
    if (old) {
        unlink_lib(F, old);
        lib_free(old, F->L);
    }
    link_lib(F, lib);
    *libname = sds_dup(lib->name);
    return NULL;
}

/* ------------------------------------------------------------ RDB */

void functions_foreach_library(server_t *srv, void (*fn)(void *arg, const char *code, size_t len), void *arg) {
    if (!srv->scripting || !F(srv)) return;
    dict_iter it;
    dict_entry *de;
    dict_iter_init(&it, F(srv)->libs, false);
    while ((de = dict_next(&it))) {
        fn_lib *lib = dict_get_val(de);
        fn(arg, lib->code, sds_len(lib->code));
    }
    dict_iter_release(&it);
}

sds functions_load_code(server_t *srv, const char *code, size_t len, bool replace) {
    if (!srv->scripting || !F(srv)) return NULL; /* tools without an engine skip functions */
    sds name = NULL;
    sds err = load_library(srv, code, len, replace, &name);
    sds_free(name);
    return err;
}

/* ------------------------------------------------------------ FCALL */

static void fcall_generic(client_t *c, bool ro) {
    functions_t *F = F(c->srv);
    long long numkeys;
    if (!cmd_get_ll_or_reply(c, c->argv[2], &numkeys, "Bad number of keys provided")) return;
    if (numkeys > c->argc - 3) {
        reply_error(c, "Number of keys can't be greater than number of args");
        return;
    }
    if (numkeys < 0) {
        reply_error(c, "Number of keys can't be negative");
        return;
    }
    fn_def *fd = dict_fetch_value(F->fns, c->argv[1]->ptr);
    if (!fd) {
        reply_error(c, "Function not found");
        return;
    }
    if (ro && !(fd->flags & SCRIPT_FLAG_NO_WRITES)) {
        reply_error(c, "Can not execute a script with write flag using *_ro command.");
        return;
    }
    script_run_t run;
    script_run_init(&run, c, fd->name, fd->flags, ro);
    run.is_function = true;
    if (!script_may_run_or_reply(&run)) return;
    script_run_begin(&run);
    lua_rawgeti(F->L, LUA_REGISTRYINDEX, fd->ref);
    slua_call(F->L, &run, c->argv + 3, (int)numkeys, c->argv + 3 + numkeys, c->argc - 3 - (int)numkeys, false);
    script_run_end(&run);
}

static void cmd_fcall(client_t *c) { fcall_generic(c, false); }
static void cmd_fcall_ro(client_t *c) { fcall_generic(c, true); }

bool functions_declared_flags(server_t *srv, const client_t *c, const command_t *cmd, int *flags) {
    if ((cmd->proc != cmd_fcall && cmd->proc != cmd_fcall_ro) || c->argc < 2 || !F(srv)) return false;
    fn_def *fd = dict_fetch_value(F(srv)->fns, c->argv[1]->ptr);
    if (!fd) return false;
    *flags = fd->flags;
    return true;
}

/* ------------------------------------------------------------ FUNCTION */

/* FUNCTION LOAD [REPLACE] code: every argument before the code is an
 * option, as Redis reads them. */
static void cmd_function_load(client_t *c) {
    bool replace = false;
    int i = 2;
    for (; i < c->argc - 1; i++) {
        if (strcasecmp(c->argv[i]->ptr, "replace")) {
            reply_error(c, "Unknown option given: %s", (char *)c->argv[i]->ptr);
            return;
        }
        replace = true;
    }
    sds name = NULL;
    char buf[32];
    size_t len;
    const char *code = obj_string_view(c->argv[i], buf, sizeof(buf), &len);
    sds err = load_library(c->srv, code, len, replace, &name);
    if (err) {
        reply_error(c, "%s", err);
        sds_free(err);
        return;
    }
    c->srv->dirty++;
    reply_bulk(c, name, sds_len(name));
    sds_free(name);
}

static void cmd_function_delete(client_t *c) {
    functions_t *F = F(c->srv);
    fn_lib *lib = dict_fetch_value(F->libs, c->argv[2]->ptr);
    if (!lib) {
        reply_error(c, "Library not found");
        return;
    }
    unlink_lib(F, lib);
    lib_free(lib, F->L);
    c->srv->dirty++;
    reply_ok(c);
}

static void cmd_function_flush(client_t *c) {
    if (c->argc == 3 && strcasecmp(c->argv[2]->ptr, "sync") && strcasecmp(c->argv[2]->ptr, "async")) {
        reply_error(c, "FUNCTION FLUSH only supports SYNC|ASYNC option");
        return;
    }
    if (c->argc > 3) {
        reply_subcommand_syntax_error(c); /* Redis 7.0's reply here */
        return;
    }
    functions_flush(c->srv);
    c->srv->dirty++;
    reply_ok(c);
}

static void reply_library(client_t *c, fn_lib *lib, bool withcode) {
    reply_map_len(c, withcode ? 4 : 3);
    reply_bulk_cstr(c, "library_name");
    reply_bulk(c, lib->name, sds_len(lib->name));
    reply_bulk_cstr(c, "engine");
    reply_bulk_cstr(c, "LUA");
    reply_bulk_cstr(c, "functions");
    reply_array_len(c, lib->nfns);
    for (int i = 0; i < lib->nfns; i++) {
        fn_def *fd = lib->fns[i];
        reply_map_len(c, 3);
        reply_bulk_cstr(c, "name");
        reply_bulk(c, fd->name, sds_len(fd->name));
        reply_bulk_cstr(c, "description");
        if (fd->desc) reply_bulk(c, fd->desc, sds_len(fd->desc));
        else reply_null(c);
        reply_bulk_cstr(c, "flags");
        static const char *const names[] = {"no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"};
        long n = 0;
        for (int b = 0; b < 5; b++)
            if (fd->flags & (1 << b)) n++;
        reply_set_len(c, n);
        for (int b = 0; b < 5; b++)
            if (fd->flags & (1 << b)) reply_simple(c, names[b]); /* status strings, as Redis sends them */
    }
    if (withcode) {
        reply_bulk_cstr(c, "library_code");
        reply_bulk(c, lib->code, sds_len(lib->code));
    }
}

static void cmd_function_list(client_t *c) {
    functions_t *F = F(c->srv);
    bool withcode = false;
    const char *pattern = NULL;
    for (int i = 2; i < c->argc; i++) {
        if (!strcasecmp(c->argv[i]->ptr, "withcode") && !withcode) {
            withcode = true;
        } else if (!strcasecmp(c->argv[i]->ptr, "libraryname") && !pattern) {
            if (i + 1 >= c->argc) {
                reply_error(c, "library name argument was not given");
                return;
            }
            pattern = c->argv[++i]->ptr;
        } else {
            reply_error(c, "Unknown argument %s", (char *)c->argv[i]->ptr);
            return;
        }
    }
    void *slot = reply_deferred_len(c);
    long n = 0;
    dict_iter it;
    dict_entry *de;
    dict_iter_init(&it, F->libs, false);
    while ((de = dict_next(&it))) {
        fn_lib *lib = dict_get_val(de);
        if (pattern && !util_glob_match(pattern, strlen(pattern), lib->name, sds_len(lib->name), false)) continue;
        reply_library(c, lib, withcode);
        n++;
    }
    dict_iter_release(&it);
    reply_set_deferred_array_len(c, slot, n);
}

static void cmd_function_stats(client_t *c) {
    server_t *srv = c->srv;
    script_run_t *run = srv->scripting->run;
    reply_map_len(c, 2);
    reply_bulk_cstr(c, "running_script");
    if (!run || !run->is_function) {
        reply_null(c);
    } else {
        reply_map_len(c, 3);
        reply_bulk_cstr(c, "name");
        reply_bulk_cstr(c, run->name);
        reply_bulk_cstr(c, "command");
        client_t *caller = run->caller;
        reply_array_len(c, caller->argc);
        for (int i = 0; i < caller->argc; i++) reply_bulk_obj(c, caller->argv[i]);
        reply_bulk_cstr(c, "duration_ms");
        reply_ll(c, util_monotonic_us() / 1000 - run->start_ms);
    }
    reply_bulk_cstr(c, "engines");
    reply_map_len(c, 1);
    reply_bulk_cstr(c, "LUA");
    reply_map_len(c, 2);
    reply_bulk_cstr(c, "libraries_count");
    reply_ll(c, (long long)functions_library_count(srv));
    reply_bulk_cstr(c, "functions_count");
    reply_ll(c, (long long)functions_count(srv));
}

static void cmd_function_kill(client_t *c) { script_kill_or_reply(c, true); }

/* ------------------------------------------------------------ DUMP */

static sds put_rdb_len(sds s, uint64_t len) {
    unsigned char b[9];
    size_t n;
    if (len < 64) {
        b[0] = (unsigned char)len;
        n = 1;
    } else if (len < 16384) {
        b[0] = (unsigned char)(0x40 | (len >> 8));
        b[1] = (unsigned char)len;
        n = 2;
    } else if (len <= 0xffffffffULL) {
        b[0] = RDB_32BITLEN;
        for (int i = 0; i < 4; i++) b[1 + i] = (unsigned char)(len >> (24 - 8 * i));
        n = 5;
    } else {
        b[0] = RDB_64BITLEN;
        for (int i = 0; i < 8; i++) b[1 + i] = (unsigned char)(len >> (56 - 8 * i));
        n = 9;
    }
    return sds_catlen(s, b, n);
}

static void dump_one(void *arg, const char *code, size_t len) {
    sds *p = arg;
    unsigned char op = RDB_OPCODE_FUNCTION2;
    *p = sds_catlen(*p, &op, 1);
    *p = put_rdb_len(*p, len);
    *p = sds_catlen(*p, code, len);
}

/* The DUMP trailer: RDB version (2 bytes LE) and the CRC-64 (LE) of
 * everything before the CRC. */
static void cmd_function_dump(client_t *c) {
    sds p = sds_empty();
    functions_foreach_library(c->srv, dump_one, &p);
    unsigned char ver[2] = {RDB_VERSION & 0xff, (RDB_VERSION >> 8) & 0xff};
    p = sds_catlen(p, ver, 2);
    uint64_t crc = crc64_update(0, p, sds_len(p));
    unsigned char le[8];
    for (int i = 0; i < 8; i++) le[i] = (unsigned char)(crc >> (8 * i));
    p = sds_catlen(p, le, 8);
    reply_bulk_sds_take(c, p);
}

static bool get_rdb_len(const unsigned char *p, size_t end, size_t *pos, uint64_t *len, bool *encoded) {
    *encoded = false;
    if (*pos >= end) return false;
    unsigned b = p[(*pos)++];
    switch (b >> 6) {
        case 0: *len = b & 0x3f; return true;
        case 1:
            if (*pos >= end) return false;
            *len = ((uint64_t)(b & 0x3f) << 8) | p[(*pos)++];
            return true;
        case 3:
            *encoded = true;
            *len = b & 0x3f;
            return true;
        default: {
            int n = b == RDB_32BITLEN ? 4 : b == RDB_64BITLEN ? 8
                                                              : 0;
            if (!n || end - *pos < (size_t)n) return false;
            uint64_t v = 0;
            for (int i = 0; i < n; i++) v = (v << 8) | p[(*pos)++];
            *len = v;
            return true;
        }
    }
}

/* An RDB string (plain, integer or LZF) at p[*pos]; NULL if malformed. */
static sds get_rdb_string(const unsigned char *p, size_t end, size_t *pos) {
    uint64_t len;
    bool enc;
    if (!get_rdb_len(p, end, pos, &len, &enc)) return NULL;
    if (!enc) {
        if (len > end - *pos) return NULL;
        sds s = sds_newlen(p + *pos, (size_t)len);
        *pos += (size_t)len;
        return s;
    }
    if (len <= RDB_ENC_INT32) {
        int n = 1 << len;
        if (end - *pos < (size_t)n) return NULL;
        long long v = 0;
        for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[*pos + (size_t)i];
        if (n == 1) v = (int8_t)v;
        else if (n == 2) v = (int16_t)v;
        else v = (int32_t)v;
        *pos += (size_t)n;
        return sds_fromll(v);
    }
    if (len != RDB_ENC_LZF) return NULL;
    uint64_t clen, ulen;
    if (!get_rdb_len(p, end, pos, &clen, &enc) || enc || !get_rdb_len(p, end, pos, &ulen, &enc) || enc) return NULL;
    /* a library's code is source text: bound the claimed size by what LZF can expand to */
    if (clen > end - *pos || ulen == 0 || ulen > clen * 256 + 64) return NULL;
    sds s = sds_newlen(NULL, (size_t)ulen);
    if (lzf_decompress(p + *pos, (unsigned)clen, s, (unsigned)ulen) != ulen) {
        sds_free(s);
        return NULL;
    }
    *pos += (size_t)clen;
    return s;
}

static void free_codes(sds *codes, int n) {
    for (int i = 0; i < n; i++) sds_free(codes[i]);
    zfree(codes);
}

enum { RESTORE_APPEND,
       RESTORE_REPLACE,
       RESTORE_FLUSH };

typedef struct restore_set {
    fn_lib **libs; /* the payload's libraries, run but not linked */
    int n;
} restore_set;

/* REPLACE: a linked library named as one of the payload's goes away. */
static bool replaced_by(const fn_lib *linked, void *arg) {
    const restore_set *rs = arg;
    for (int i = 0; i < rs->n; i++)
        if (!strcmp(rs->libs[i]->name, linked->name)) return true;
    return false;
}

/* The first error that stops the payload's libraries from joining the
 * linked ones under policy, or NULL: the same name twice in the payload,
 * then (APPEND) a library of that name already linked, then a function
 * name another library holds (Redis's order). */
static sds restore_conflict(functions_t *F, const restore_set *rs, int policy) {
    for (int i = 0; i < rs->n; i++) {
        const fn_lib *a = rs->libs[i];
        for (int j = i + 1; j < rs->n; j++) {
            const fn_lib *b = rs->libs[j];
            if (!strcmp(a->name, b->name)) return sds_catprintf(sds_empty(), "Library %s already exists", a->name);
            for (int x = 0; x < a->nfns; x++)
                for (int y = 0; y < b->nfns; y++)
                    if (!strcasecmp(a->fns[x]->name, b->fns[y]->name))
                        return sds_catprintf(sds_empty(), "Function %s already exists", a->fns[x]->name);
        }
    }
    if (policy == RESTORE_FLUSH) return NULL;
    for (int i = 0; i < rs->n; i++) {
        if (policy == RESTORE_APPEND && dict_fetch_value(F->libs, rs->libs[i]->name))
            return sds_catprintf(sds_empty(), "Library %s already exists", rs->libs[i]->name);
        const char *taken = taken_function(F, rs->libs[i], policy == RESTORE_REPLACE ? replaced_by : NULL, (void *)rs);
        if (taken) return sds_catprintf(sds_empty(), "Function %s already exists", taken);
    }
    return NULL;
}

/* FUNCTION RESTORE's libraries, all or none (Redis 7.0 builds the new set
 * aside and joins it): every library is run first, then checked against
 * the others and the linked ones, and only then linked.  NULL or the
 * error. */
static sds restore_libraries(server_t *srv, sds *codes, int n, int policy) {
    functions_t *F = F(srv);
    restore_set rs = {zcalloc(sizeof(fn_lib *) * (size_t)(n + 1)), 0};
    sds err = NULL;
    for (int i = 0; i < n && !err; i++) {
        sds name = NULL;
        size_t off = 0;
        if ((err = parse_meta(codes[i], sds_len(codes[i]), &name, &off))) sds_free(name);
        else if (!(err = run_library(srv, name, codes[i], sds_len(codes[i]), off, &rs.libs[rs.n]))) rs.n++;
    }
    if (!err) err = restore_conflict(F, &rs, policy);
    if (err) {
        for (int i = 0; i < rs.n; i++) lib_free(rs.libs[i], F->L);
        zfree(rs.libs);
        return err;
    }
    if (policy == RESTORE_FLUSH) functions_flush(srv);
    for (int i = 0; i < rs.n; i++) {
        fn_lib *old = dict_fetch_value(F->libs, rs.libs[i]->name);
        if (old) { /* REPLACE */
            unlink_lib(F, old);
            lib_free(old, F->L);
        }
        link_lib(F, rs.libs[i]);
    }
    zfree(rs.libs);
    return NULL;
}

static void cmd_function_restore(client_t *c) {
    int policy = RESTORE_APPEND;
    if (c->argc > 4) {
        reply_subcommand_syntax_error(c);
        return;
    }
    if (c->argc == 4) {
        const char *pol = c->argv[3]->ptr;
        if (!strcasecmp(pol, "append")) policy = RESTORE_APPEND;
        else if (!strcasecmp(pol, "replace")) policy = RESTORE_REPLACE;
        else if (!strcasecmp(pol, "flush")) policy = RESTORE_FLUSH;
        else {
            reply_error(c, "Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
            return;
        }
    }
    char buf[32];
    size_t len;
    const unsigned char *p = (const unsigned char *)obj_string_view(c->argv[2], buf, sizeof(buf), &len);
    if (len < 10 || (unsigned)(p[len - 10] | (p[len - 9] << 8)) > RDB_VERSION_LOAD_MAX) {
        reply_error(c, "DUMP payload version or checksum are wrong");
        return;
    }
    uint64_t stored = 0;
    for (int i = 7; i >= 0; i--) stored = (stored << 8) | p[len - 8 + (size_t)i];
    if (crc64_update(0, p, len - 8) != stored) {
        reply_error(c, "DUMP payload version or checksum are wrong");
        return;
    }
    size_t pos = 0, end = len - 10;
    sds *codes = NULL;
    int n = 0;
    while (pos < end) {
        if (p[pos++] != RDB_OPCODE_FUNCTION2) {
            free_codes(codes, n);
            reply_error(c, "given type is not a function");
            return;
        }
        sds code = get_rdb_string(p, end, &pos);
        if (!code) {
            free_codes(codes, n);
            reply_error(c, "DUMP payload version or checksum are wrong");
            return;
        }
        codes = zrealloc(codes, sizeof(sds) * (size_t)(n + 1));
        codes[n++] = code;
    }
    sds err = restore_libraries(c->srv, codes, n, policy);
    free_codes(codes, n);
    if (err) {
        reply_error(c, "%s", err);
        sds_free(err);
        return;
    }
    c->srv->dirty++;
    reply_ok(c);
}

static void cmd_function_help(client_t *c) {
    static const char *lines[] = {
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries:",
        "    * Library name",
        "    * The engine used to run the Library",
        "    * Library description",
        "    * Functions list",
        "    * Library code (if WITHCODE is given)",
        "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
        "STATS",
        "    Return information about the current function running:",
        "    * Function name",
        "    * Command used to run the function",
        "    * Duration in MS that the function is running",
        "    If no function is running, return nil",
        "    In addition, returns a list of available engines.",
        "KILL",
        "    Kill the current running function.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "DUMP",
        "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
        "    control how to handle existing libraries (default APPEND):",
        "    * FLUSH: delete all existing libraries.",
        "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
        "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
        "      libraries with the new libraries (notice that even on this option there is a chance of failure",
        "      in case of functions name collision with another library).",
        NULL};
    reply_help(c, "FUNCTION", lines);
}

static command_t function_subcommands[] = {
    {"load", cmd_function_load, -3, CMD_NOSCRIPT | CMD_WRITE | CMD_DENYOOM, 0, 0, 0, "scripting", "Create a function library.", "7.0.0", NULL},
    {"delete", cmd_function_delete, 3, CMD_NOSCRIPT | CMD_WRITE, 0, 0, 0, "scripting", "Delete a library and its functions.", "7.0.0", NULL},
    {"flush", cmd_function_flush, -2, CMD_NOSCRIPT | CMD_WRITE, 0, 0, 0, "scripting", "Delete all libraries and functions.", "7.0.0", NULL},
    {"list", cmd_function_list, -2, CMD_NOSCRIPT, 0, 0, 0, "scripting", "List information about all libraries.", "7.0.0", NULL},
    {"stats", cmd_function_stats, 2, CMD_NOSCRIPT, 0, 0, 0, "scripting", "Return information about a function during execution.", "7.0.0", NULL},
    {"kill", cmd_function_kill, 2, CMD_NOSCRIPT, 0, 0, 0, "scripting", "Terminate a function during execution.", "7.0.0", NULL},
    {"dump", cmd_function_dump, 2, CMD_NOSCRIPT, 0, 0, 0, "scripting", "Dump all functions into a serialized binary payload", "7.0.0", NULL},
    {"restore", cmd_function_restore, -3, CMD_NOSCRIPT | CMD_WRITE | CMD_DENYOOM, 0, 0, 0, "scripting", "Restore all the functions on the given payload", "7.0.0", NULL},
    {"help", cmd_function_help, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "scripting", "Show helpful text about the different subcommands", "7.0.0", NULL},
    {0},
};

command_t function_commands[] = {
    {"function", NULL, -2, 0, 0, 0, 0, "scripting", "A container for function commands", "7.0.0", function_subcommands},
    {"fcall", cmd_fcall, -3, CMD_NOSCRIPT | CMD_STALE | CMD_MAY_REPLICATE, 0, 0, 0, "scripting", "Invoke a function", "7.0.0", NULL},
    {"fcall_ro", cmd_fcall_ro, -3, CMD_NOSCRIPT | CMD_STALE | CMD_READONLY, 0, 0, 0, "scripting", "Invoke a read-only function", "7.0.0", NULL},
    {0},
};
