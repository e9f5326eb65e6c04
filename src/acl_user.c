/* acl_user.c: ACL users and selectors, the rule language, and the rules a
 * user is printed as (see acl_user.h).
 *
 * Rules follow Redis 7.0 to the letter, because clients and aclfiles
 * written for Redis must mean the same here: "+@cat" sets the bit of every
 * command (and every subcommand of a container) in the category, "-cmd"
 * also clears "allcommands", "+cmd|arg" on a command without subcommands
 * allows one first argument.  ACL GETUSER and ACL LIST do not replay the
 * rules a user typed: they describe the bitmap, starting from "+@all" or
 * "-@all" and greedily adding the category that fixes most bits while
 * breaking fewer than it fixes, then single commands -- the algorithm
 * Redis 7.0 prints with, so the same bitmap prints the same text.  This
 * file never looks at clients or the user registry (acl.c). */
#include "acl_user.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "command_meta.h"
#include "rl_assert.h"
#include "sha256.h"
#include "util.h"
#include "zmalloc.h"

/* ------------------------------------------------------------ commands */

typedef struct acl_cmd {
    const char *name;           /* full name, "config|get" */
    uint64_t categories;        /* ACL_CAT_* */
    int parent;                 /* id, or -1 */
    int first_child, nchildren; /* children are ids first_child.. in kids[] */
    acl_cmd_info_t info;        /* channels and plain key range (acl.c's fast path) */
} acl_cmd_t;

/* Immutable after start-up, like the command tables it is derived from. */
static struct {
    acl_cmd_t *cmds;
    int n;
    int *kids;       /* child ids grouped by parent */
    bool pubsub_all; /* acl-pubsub-default allchannels */
} tab;

static void set_id(void *arg, command_t *cmd) {
    int *next = arg;
    if (cmd->meta) {
        cmd->acl_id = (int)(cmd->meta - cmd_meta_table);
        return;
    }
    /* Our own command: a fresh id, with its parent if it has one. */
    rl_assert(*next < ACL_FUTURE_BIT);
    acl_cmd_t *e = &tab.cmds[*next];
    e->name = cmd->fullname;
    e->categories = 0;
    e->parent = cmd->parent ? cmd->parent->acl_id : -1;
    cmd->acl_id = (*next)++;
}

/* Channel arguments (PUBLISH's first, (S|P)SUBSCRIBE's all); leaving a
 * channel needs no permission. */
static acl_chan_kind_t chan_kind(const char *name) {
    if (!strcmp(name, "publish") || !strcmp(name, "spublish")) return ACL_CHAN_FIRST;
    if (!strcmp(name, "subscribe") || !strcmp(name, "ssubscribe")) return ACL_CHAN_ALL;
    if (!strcmp(name, "psubscribe")) return ACL_CHAN_ALL_PATTERNS;
    return ACL_CHAN_NONE;
}

/* A row whose keys are one plain range: everything but the commands
 * cmd_meta_get_keys special-cases (their flags or keys depend on options). */
static void plain_range(const cmd_meta_t *m, acl_cmd_info_t *info) {
    static const char *const special[] = {"sort", "sort_ro", "bitfield", "migrate", "georadius",
                                          "georadiusbymember"};
    for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
        if (!strcmp(m->fullname, special[i])) return;
    if (!strcmp(m->fullname, "set")) {
        info->keys = ACL_KEYS_SET;
        return;
    }
    if (m->nkey_specs == 0) {
        info->keys = ACL_KEYS_NONE;
        return;
    }
    if (m->nkey_specs != 1) return;
    const cmd_key_spec_t *ks = &m->key_specs[0];
    if (ks->begin != KS_BEGIN_INDEX || ks->find != KS_FIND_RANGE) return;
    if (ks->flags & (KSF_NOT_KEY | KSF_INCOMPLETE | KSF_VARIABLE_FLAGS)) return;
    info->keys = ACL_KEYS_RANGE;
    info->kfirst = ks->begin_pos;
    info->klast = ks->fk_a;
    info->kstep = ks->fk_b;
    info->klimit = ks->fk_c;
    info->kflags = ks->flags;
}

const acl_cmd_info_t *acl_cmd_infos;

void acl_cmdtab_init(server_t *srv) {
    size_t n = cmd_meta_count;
    rl_assert(n < ACL_FUTURE_BIT);
    tab.cmds = zcalloc(sizeof(acl_cmd_t) * ACL_CMD_BITS);
    for (size_t i = 0; i < n; i++) {
        const cmd_meta_t *m = &cmd_meta_table[i];
        acl_cmd_t *e = &tab.cmds[i];
        e->name = m->fullname;
        e->categories = m->acl_categories;
        e->parent = -1;
        e->info.chan = chan_kind(m->fullname);
        plain_range(m, &e->info);
        const char *bar = strchr(m->fullname, '|');
        if (bar) {
            char base[64];
            size_t bl = (size_t)(bar - m->fullname);
            if (bl < sizeof(base)) {
                memcpy(base, m->fullname, bl);
                base[bl] = '\0';
                const cmd_meta_t *p = cmd_meta_lookup(base);
                if (p) e->parent = (int)(p - cmd_meta_table);
            }
        }
    }
    int next = (int)n;
    commands_foreach(srv, set_id, &next);
    /* A flat copy of the infos, for the check's hot path. */
    acl_cmd_info_t *infos = zcalloc(sizeof(acl_cmd_info_t) * ACL_CMD_BITS);
    for (int i = 0; i < next; i++) infos[i] = tab.cmds[i].info;
    acl_cmd_infos = infos;
    tab.n = next;
    /* Children lists: count, then place. */
    tab.kids = zcalloc(sizeof(int) * (size_t)(tab.n ? tab.n : 1));
    for (int i = 0; i < tab.n; i++)
        if (tab.cmds[i].parent >= 0) tab.cmds[tab.cmds[i].parent].nchildren++;
    int pos = 0;
    for (int i = 0; i < tab.n; i++) {
        tab.cmds[i].first_child = pos;
        pos += tab.cmds[i].nchildren;
        tab.cmds[i].nchildren = 0;
    }
    for (int i = 0; i < tab.n; i++) {
        int p = tab.cmds[i].parent;
        if (p >= 0) tab.kids[tab.cmds[p].first_child + tab.cmds[p].nchildren++] = i;
    }
}

void acl_cmdtab_free(void) {
    zfree((void *)acl_cmd_infos);
    acl_cmd_infos = NULL;
    zfree(tab.cmds);
    zfree(tab.kids);
    memset(&tab, 0, sizeof(tab));
}

int acl_cmdtab_count(void) { return tab.n; }
const char *acl_cmdtab_name(int id) { return tab.cmds[id].name; }
uint64_t acl_cmdtab_categories(int id) { return tab.cmds[id].categories; }
void acl_set_pubsub_default(bool allchannels) { tab.pubsub_all = allchannels; }

/* The id of a full name ("get", "config|get"), case-insensitive, or -1. */
static int lookup_id(const char *name) {
    const cmd_meta_t *m = cmd_meta_lookup(name);
    if (m) return (int)(m - cmd_meta_table);
    for (int i = (int)cmd_meta_count; i < tab.n; i++)
        if (!strcasecmp(tab.cmds[i].name, name)) return i;
    return -1;
}

/* ------------------------------------------------------------ selectors */

static bool get_bit(const acl_selector_t *s, int id) { return acl_sel_bit(s, id); }

static void set_bit(acl_selector_t *s, int id, bool on) {
    if (on) {
        s->allowed[id / 64] |= 1ull << (id % 64);
    } else {
        s->allowed[id / 64] &= ~(1ull << (id % 64));
        s->flags &= ~ACL_SEL_ALLCOMMANDS; /* no longer "everything" */
    }
}

static void free_firstargs_of(acl_selector_t *s, int id) {
    if (!s->firstargs || !s->firstargs[id]) return;
    for (sds *a = s->firstargs[id]; *a; a++) sds_free(*a);
    zfree(s->firstargs[id]);
    s->firstargs[id] = NULL;
}

static void free_firstargs(acl_selector_t *s) {
    if (!s->firstargs) return;
    for (int i = 0; i < ACL_CMD_BITS; i++) free_firstargs_of(s, i);
    zfree(s->firstargs);
    s->firstargs = NULL;
}

static void add_firstarg(acl_selector_t *s, int id, const char *arg) {
    if (!s->firstargs) s->firstargs = zcalloc(sizeof(sds *) * ACL_CMD_BITS);
    size_t n = 0;
    if (s->firstargs[id])
        for (; s->firstargs[id][n]; n++)
            if (!strcasecmp(s->firstargs[id][n], arg)) return;
    s->firstargs[id] = zrealloc(s->firstargs[id], sizeof(sds) * (n + 2));
    s->firstargs[id][n] = sds_new(arg);
    s->firstargs[id][n + 1] = NULL;
}

/* Allow or block a command, and every subcommand of a container. */
static void change_perm(acl_selector_t *s, int id, bool allow) {
    set_bit(s, id, allow);
    free_firstargs_of(s, id);
    const acl_cmd_t *e = &tab.cmds[id];
    for (int k = 0; k < e->nchildren; k++) set_bit(s, tab.kids[e->first_child + k], allow);
}

static void set_category(acl_selector_t *s, uint64_t cat, bool allow) {
    for (int i = 0; i < tab.n; i++)
        if (tab.cmds[i].categories & cat) change_perm(s, i, allow);
}

static acl_selector_t *selector_new(unsigned flags) {
    acl_selector_t *s = zcalloc(sizeof(*s));
    s->flags = flags | (tab.pubsub_all ? ACL_SEL_ALLCHANNELS : 0);
    return s;
}

static void clear_keys(acl_selector_t *s) {
    for (int i = 0; i < s->nkeys; i++) sds_free(s->keys[i].pattern);
    zfree(s->keys);
    s->keys = NULL;
    s->nkeys = 0;
}

static void clear_channels(acl_selector_t *s) {
    for (int i = 0; i < s->nchannels; i++) sds_free(s->channels[i]);
    zfree(s->channels);
    s->channels = NULL;
    s->nchannels = 0;
}

static void selector_free(acl_selector_t *s) {
    if (!s) return;
    clear_keys(s);
    clear_channels(s);
    free_firstargs(s);
    sds_free(s->rules);
    zfree(s);
}

static acl_selector_t *selector_dup(const acl_selector_t *src) {
    acl_selector_t *s = zcalloc(sizeof(*s));
    s->flags = src->flags;
    memcpy(s->allowed, src->allowed, sizeof(s->allowed));
    if (src->nkeys) {
        s->keys = zmalloc(sizeof(acl_keypat_t) * (size_t)src->nkeys);
        for (int i = 0; i < src->nkeys; i++) {
            s->keys[i] = src->keys[i];
            s->keys[i].pattern = sds_dup(src->keys[i].pattern);
        }
        s->nkeys = src->nkeys;
    }
    if (src->nchannels) {
        s->channels = zmalloc(sizeof(sds) * (size_t)src->nchannels);
        for (int i = 0; i < src->nchannels; i++) s->channels[i] = sds_dup(src->channels[i]);
        s->nchannels = src->nchannels;
    }
    if (src->firstargs)
        for (int id = 0; id < ACL_CMD_BITS; id++)
            if (src->firstargs[id])
                for (sds *a = src->firstargs[id]; *a; a++) add_firstarg(s, id, *a);
    if (src->rules) s->rules = sds_dup(src->rules);
    return s;
}

bool acl_has_spaces(const char *s, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (isspace((unsigned char)s[i]) || s[i] == 0) return true;
    return false;
}

/* A pattern with no glob characters is a literal; one whose only glob
 * character is a final '*' is a prefix.  Anything else goes to the glob
 * matcher, which gives the same answer for the two simple shapes. */
static void classify_pattern(acl_keypat_t *k) {
    size_t len = sds_len(k->pattern);
    size_t special = len;
    for (size_t i = 0; i < len; i++) {
        char ch = k->pattern[i];
        if (ch == '*' || ch == '?' || ch == '[' || ch == '\\') {
            special = i;
            break;
        }
    }
    if (special == len) {
        k->kind = ACL_PAT_EXACT;
    } else if (special == len - 1 && k->pattern[special] == '*') {
        k->kind = ACL_PAT_PREFIX;
        k->prefix_len = len - 1;
    } else {
        k->kind = ACL_PAT_GLOB;
    }
}

/* "~pat", "%R~pat", "%RW~pat": a key pattern with its permissions. */
static acl_rule_err_t add_key_pattern(acl_selector_t *s, const char *op, size_t len) {
    if (s->flags & ACL_SEL_ALLKEYS) return ACL_RULE_KEYS_AFTER_ALL;
    unsigned perm = 0;
    size_t off = 1;
    if (op[0] == '%') {
        for (; off < len; off++) {
            char ch = (char)toupper((unsigned char)op[off]);
            if (ch == 'R' && !(perm & ACL_KEY_READ)) perm |= ACL_KEY_READ;
            else if (ch == 'W' && !(perm & ACL_KEY_WRITE)) perm |= ACL_KEY_WRITE;
            else if (op[off] == '~') {
                off++;
                break;
            } else return ACL_RULE_SYNTAX;
        }
        /* "%~x" grants nothing: Redis cannot print it back, refuse it. */
        if (!perm) return ACL_RULE_SYNTAX;
    } else {
        perm = ACL_KEY_ALL;
    }
    if (acl_has_spaces(op + off, len - off)) return ACL_RULE_SYNTAX;
    for (int i = 0; i < s->nkeys; i++) {
        if (sds_len(s->keys[i].pattern) == len - off && !memcmp(s->keys[i].pattern, op + off, len - off)) {
            s->keys[i].perm |= perm;
            s->flags &= ~ACL_SEL_ALLKEYS;
            return ACL_RULE_OK;
        }
    }
    s->keys = zrealloc(s->keys, sizeof(acl_keypat_t) * (size_t)(s->nkeys + 1));
    s->keys[s->nkeys] = (acl_keypat_t){sds_newlen(op + off, len - off), perm, ACL_PAT_GLOB, 0};
    classify_pattern(&s->keys[s->nkeys++]);
    s->flags &= ~ACL_SEL_ALLKEYS;
    return ACL_RULE_OK;
}

static acl_rule_err_t add_channel(acl_selector_t *s, const char *op, size_t len) {
    if (s->flags & ACL_SEL_ALLCHANNELS) return ACL_RULE_CHANS_AFTER_ALL;
    if (acl_has_spaces(op + 1, len - 1)) return ACL_RULE_SYNTAX;
    for (int i = 0; i < s->nchannels; i++)
        if (sds_len(s->channels[i]) == len - 1 && !memcmp(s->channels[i], op + 1, len - 1)) return ACL_RULE_OK;
    s->channels = zrealloc(s->channels, sizeof(sds) * (size_t)(s->nchannels + 1));
    s->channels[s->nchannels++] = sds_newlen(op + 1, len - 1);
    return ACL_RULE_OK;
}

/* ---------------------------------------------------- rules as written */

/* Does the recorded rule word w (without its sign, len n) fall under the
 * new rule r: the same command or category, or a subcommand or first
 * argument of the command r names? */
static bool rule_covered(const char *w, size_t n, const char *r, size_t rlen) {
    if (n < rlen || memcmp(w, r, rlen) != 0) return false;
    return n == rlen || w[rlen] == '|';
}

/* Record a command rule as Redis 7.2+ keeps it for ACL GETUSER/LIST: the
 * earlier rules it overrides are dropped (every bit they set, this one sets
 * again later, so the printed list rebuilds the same bitmap) and it goes
 * last, lower-cased. */
static void record_rule(acl_selector_t *s, const char *rule, bool allow) {
    sds r = sds_new(rule);
    sds_tolower(r);
    sds kept = sds_empty();
    const char *p = s->rules ? s->rules : "";
    while (*p) {
        const char *end = strchr(p, ' ');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (!rule_covered(p + 1, n - 1, r, sds_len(r))) {
            if (sds_len(kept)) kept = sds_catlen(kept, " ", 1);
            kept = sds_catlen(kept, p, n);
        }
        p += n + (end ? 1 : 0);
    }
    if (sds_len(kept)) kept = sds_catlen(kept, " ", 1);
    kept = sds_catprintf(kept, "%c%s", allow ? '+' : '-', r);
    sds_free(r);
    sds_free(s->rules);
    s->rules = kept;
}

static void clear_rules(acl_selector_t *s) {
    sds_free(s->rules);
    s->rules = NULL;
}

/* "+cmd", "+cmd|sub" (a subcommand) or "+cmd|arg" (a first argument of a
 * command without subcommands). */
static acl_rule_err_t allow_command(acl_selector_t *s, const char *name) {
    const char *bar = strrchr(name, '|');
    if (!bar) {
        int id = lookup_id(name);
        if (id < 0) return ACL_RULE_NO_SUCH_CMD;
        change_perm(s, id, true);
        record_rule(s, tab.cmds[id].name, true);
        return ACL_RULE_OK;
    }
    sds base = sds_newlen(name, (size_t)(bar - name));
    int id = lookup_id(base);
    sds_free(base);
    if (id < 0) return ACL_RULE_NO_SUCH_CMD;
    if (tab.cmds[id].parent >= 0) return ACL_RULE_SUB_FIRSTARG;
    if (bar[1] == '\0') return ACL_RULE_SYNTAX;
    if (tab.cmds[id].nchildren) {
        int sub = lookup_id(name);
        if (sub < 0) return ACL_RULE_NO_SUCH_CMD;
        change_perm(s, sub, true);
    } else {
        add_firstarg(s, id, bar + 1);
    }
    record_rule(s, name, true);
    return ACL_RULE_OK;
}

/* One rule that a selector understands (everything but user flags and
 * passwords). */
static acl_rule_err_t selector_set(acl_selector_t *s, const char *op, size_t len) {
    if (!strcasecmp(op, "allkeys") || !strcasecmp(op, "~*")) {
        s->flags |= ACL_SEL_ALLKEYS;
        clear_keys(s);
    } else if (!strcasecmp(op, "resetkeys")) {
        s->flags &= ~ACL_SEL_ALLKEYS;
        clear_keys(s);
    } else if (!strcasecmp(op, "allchannels") || !strcasecmp(op, "&*")) {
        s->flags |= ACL_SEL_ALLCHANNELS;
        clear_channels(s);
    } else if (!strcasecmp(op, "resetchannels")) {
        s->flags &= ~ACL_SEL_ALLCHANNELS;
        clear_channels(s);
    } else if (!strcasecmp(op, "allcommands") || !strcasecmp(op, "+@all")) {
        memset(s->allowed, 0xff, sizeof(s->allowed));
        s->flags |= ACL_SEL_ALLCOMMANDS;
        free_firstargs(s);
        clear_rules(s);
    } else if (!strcasecmp(op, "nocommands") || !strcasecmp(op, "-@all")) {
        memset(s->allowed, 0, sizeof(s->allowed));
        s->flags &= ~ACL_SEL_ALLCOMMANDS;
        free_firstargs(s);
        clear_rules(s);
    } else if (op[0] == '~' || op[0] == '%') {
        return add_key_pattern(s, op, len);
    } else if (op[0] == '&') {
        return add_channel(s, op, len);
    } else if ((op[0] == '+' || op[0] == '-') && op[1] == '@') {
        int cat = cmd_meta_acl_category_index(op + 2);
        if (cat < 0) return ACL_RULE_NO_SUCH_CMD;
        set_category(s, 1ull << cat, op[0] == '+');
        record_rule(s, op + 1, op[0] == '+');
    } else if (op[0] == '+') {
        return allow_command(s, op + 1);
    } else if (op[0] == '-') {
        int id = lookup_id(op + 1);
        if (id < 0) return ACL_RULE_NO_SUCH_CMD;
        change_perm(s, id, false);
        record_rule(s, tab.cmds[id].name, false);
    } else {
        return ACL_RULE_SYNTAX;
    }
    return ACL_RULE_OK;
}

/* "(rule rule ...)": a new selector, or NULL with *err set. */
static acl_selector_t *selector_from_set(const char *op, size_t len, acl_rule_err_t *err) {
    acl_selector_t *s = selector_new(0);
    sds inner = sds_newlen(op + 1, len - 2);
    int argc = 0;
    sds *argv = sds_splitargs(inner, &argc);
    sds_free(inner);
    *err = argv ? ACL_RULE_OK : ACL_RULE_SYNTAX;
    for (int i = 0; argv && i < argc && *err == ACL_RULE_OK; i++) *err = selector_set(s, argv[i], sds_len(argv[i]));
    if (argv) sds_free_splitres(argv, argc);
    if (*err != ACL_RULE_OK) {
        selector_free(s);
        return NULL;
    }
    return s;
}

/* ------------------------------------------------------------ users */

acl_user_t *acl_user_new(const char *name, size_t len) {
    acl_user_t *u = zcalloc(sizeof(*u));
    u->name = sds_newlen(name, len);
    u->flags = ACL_USER_DISABLED | ACL_USER_SANITIZE; /* Redis 7.2+: shown by GETUSER and LIST */
    u->sel = zmalloc(sizeof(acl_selector_t *));
    u->sel[0] = selector_new(ACL_SEL_ROOT);
    u->nsel = 1;
    return u;
}

static void clear_passwords(acl_user_t *u) {
    for (int i = 0; i < u->npasswords; i++) sds_free(u->passwords[i]);
    zfree(u->passwords);
    u->passwords = NULL;
    u->npasswords = 0;
}

static void clear_selectors(acl_user_t *u, int keep) {
    for (int i = keep; i < u->nsel; i++) selector_free(u->sel[i]);
    u->nsel = keep;
}

void acl_user_free(acl_user_t *u) {
    if (!u) return;
    sds_free(u->name);
    clear_passwords(u);
    clear_selectors(u, 0);
    zfree(u->sel);
    sds_free(u->described);
    zfree(u);
}

/* Whether checks can be skipped: one selector that allows every command,
 * key and channel (the default user, most of the time). */
static void update_unrestricted(acl_user_t *u) {
    const unsigned all = ACL_SEL_ALLCOMMANDS | ACL_SEL_ALLKEYS | ACL_SEL_ALLCHANNELS;
    u->unrestricted = u->nsel == 1 && (u->sel[0]->flags & all) == all;
}

void acl_user_copy(acl_user_t *dst, const acl_user_t *src) {
    clear_passwords(dst);
    clear_selectors(dst, 0);
    dst->flags = src->flags;
    if (src->npasswords) {
        dst->passwords = zmalloc(sizeof(sds) * (size_t)src->npasswords);
        for (int i = 0; i < src->npasswords; i++) dst->passwords[i] = sds_dup(src->passwords[i]);
        dst->npasswords = src->npasswords;
    }
    dst->sel = zrealloc(dst->sel, sizeof(acl_selector_t *) * (size_t)src->nsel);
    for (int i = 0; i < src->nsel; i++) dst->sel[i] = selector_dup(src->sel[i]);
    dst->nsel = src->nsel;
    sds_free(dst->described);
    dst->described = NULL;
    update_unrestricted(dst);
}

static bool valid_hash(const char *h, size_t len) {
    if (len != SHA256_HEX_LEN) return false;
    for (size_t i = 0; i < len; i++)
        if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f'))) return false;
    return true;
}

static int find_password(const acl_user_t *u, const char *hash) {
    for (int i = 0; i < u->npasswords; i++)
        if (!memcmp(u->passwords[i], hash, SHA256_HEX_LEN)) return i;
    return -1;
}

/* ">pass" / "#hash" add, "<pass" / "!hash" remove. */
static acl_rule_err_t password_rule(acl_user_t *u, const char *op, size_t len) {
    char hash[SHA256_HEX_LEN + 1];
    if (op[0] == '>' || op[0] == '<') {
        sha256_hex(op + 1, len - 1, hash);
    } else {
        if (!valid_hash(op + 1, len - 1)) return ACL_RULE_BAD_HASH;
        memcpy(hash, op + 1, SHA256_HEX_LEN);
        hash[SHA256_HEX_LEN] = '\0';
    }
    int at = find_password(u, hash);
    if (op[0] == '>' || op[0] == '#') {
        if (at < 0) {
            u->passwords = zrealloc(u->passwords, sizeof(sds) * (size_t)(u->npasswords + 1));
            u->passwords[u->npasswords++] = sds_new(hash);
        }
        u->flags &= ~ACL_USER_NOPASS;
        return ACL_RULE_OK;
    }
    if (at < 0) return ACL_RULE_NO_SUCH_PASS;
    sds_free(u->passwords[at]);
    memmove(&u->passwords[at], &u->passwords[at + 1], sizeof(sds) * (size_t)(u->npasswords - at - 1));
    u->npasswords--;
    return ACL_RULE_OK;
}

static void reset_user(acl_user_t *u) {
    acl_user_set_rule(u, "resetpass", 9);
    acl_user_set_rule(u, "resetkeys", 9);
    acl_user_set_rule(u, "resetchannels", 13);
    if (tab.pubsub_all) acl_user_set_rule(u, "allchannels", 11);
    acl_user_set_rule(u, "off", 3);
    acl_user_set_rule(u, "sanitize-payload", 16);
    acl_user_set_rule(u, "clearselectors", 14);
    acl_user_set_rule(u, "-@all", 5);
}

static acl_rule_err_t user_rule(acl_user_t *u, const char *op, size_t len) {
    if (len == 0) return ACL_RULE_OK;
    if (!strcasecmp(op, "on")) {
        u->flags = (u->flags | ACL_USER_ENABLED) & ~ACL_USER_DISABLED;
    } else if (!strcasecmp(op, "off")) {
        u->flags = (u->flags | ACL_USER_DISABLED) & ~ACL_USER_ENABLED;
    } else if (!strcasecmp(op, "skip-sanitize-payload")) {
        u->flags = (u->flags | ACL_USER_SANITIZE_SKIP) & ~ACL_USER_SANITIZE;
    } else if (!strcasecmp(op, "sanitize-payload")) {
        u->flags = (u->flags | ACL_USER_SANITIZE) & ~ACL_USER_SANITIZE_SKIP;
    } else if (!strcasecmp(op, "nopass")) {
        u->flags |= ACL_USER_NOPASS;
        clear_passwords(u);
    } else if (!strcasecmp(op, "resetpass")) {
        u->flags &= ~ACL_USER_NOPASS;
        clear_passwords(u);
    } else if (op[0] == '>' || op[0] == '#' || op[0] == '<' || op[0] == '!') {
        return password_rule(u, op, len);
    } else if (op[0] == '(' && op[len - 1] == ')') {
        acl_rule_err_t err;
        acl_selector_t *s = selector_from_set(op, len, &err);
        if (!s) return err;
        u->sel = zrealloc(u->sel, sizeof(acl_selector_t *) * (size_t)(u->nsel + 1));
        u->sel[u->nsel++] = s;
    } else if (!strcasecmp(op, "clearselectors")) {
        clear_selectors(u, 1);
    } else if (!strcasecmp(op, "reset")) {
        reset_user(u);
    } else {
        return selector_set(u->sel[0], op, len);
    }
    return ACL_RULE_OK;
}

acl_rule_err_t acl_user_set_rule(acl_user_t *u, const char *op, size_t len) {
    sds_free(u->described);
    u->described = NULL;
    acl_rule_err_t err = user_rule(u, op, len);
    update_unrestricted(u);
    return err;
}

const char *acl_rule_error_text(acl_rule_err_t e) {
    switch (e) {
        case ACL_RULE_NO_SUCH_CMD: return "Unknown command or category name in ACL";
        case ACL_RULE_SYNTAX: return "Syntax error";
        case ACL_RULE_KEYS_AFTER_ALL:
            return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any "
                   "effect. Try 'resetkeys' to start with an empty list of patterns";
        case ACL_RULE_CHANS_AFTER_ALL:
            return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have "
                   "any effect. Try 'resetchannels' to start with an empty list of channels";
        case ACL_RULE_NO_SUCH_PASS: return "The password you are trying to remove from the user does not exist";
        case ACL_RULE_BAD_HASH:
            return "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters";
        case ACL_RULE_DUP_USER: return "Duplicate user found. A user can only be defined once in config files";
        case ACL_RULE_SUB_FIRSTARG: return "Allowing first-arg of a subcommand is not supported";
        case ACL_RULE_OK: break;
    }
    return "Wrong format";
}

sds *acl_merge_selector_args(sds *argv, int argc, int *merged, int *bad) {
    sds *out = zmalloc(sizeof(sds) * (size_t)(argc ? argc : 1));
    int n = 0, open_at = -1;
    sds sel = NULL;
    for (int j = 0; j < argc; j++) {
        const char *op = argv[j];
        size_t len = sds_len(argv[j]);
        if (open_at < 0 && len && op[0] == '(' && op[len - 1] != ')') {
            sel = sds_dup(argv[j]);
            open_at = j;
            continue;
        }
        if (open_at >= 0) {
            sel = sds_cat(sds_cat(sel, " "), op);
            if (len && op[len - 1] == ')') {
                out[n++] = sel;
                sel = NULL;
                open_at = -1;
            }
            continue;
        }
        out[n++] = sds_dup(argv[j]);
    }
    if (open_at >= 0) {
        for (int i = 0; i < n; i++) sds_free(out[i]);
        zfree(out);
        sds_free(sel);
        if (bad) *bad = open_at;
        return NULL;
    }
    *merged = n;
    return out;
}

/* ------------------------------------------------------------ describing */

/* Whether the printed rules rebuild exactly this bitmap (anything else
 * would silently change a user's rights on ACL SAVE / LOAD).  A first
 * argument holding a space or a quote ("+select|a b") is printed as
 * written and does not read back as one rule; such text is not checked
 * (Redis 7.4.1 asserts there, and ACL GETUSER takes the server down). */
static bool rules_rebuild(const acl_selector_t *s, const char *text) {
    acl_selector_t fake = {0};
    int argc = 0;
    sds *argv = sds_splitargs(text, &argc);
    bool parsed = argv != NULL;
    for (int i = 0; parsed && i < argc; i++) parsed = selector_set(&fake, argv[i], sds_len(argv[i])) == ACL_RULE_OK;
    if (argv) sds_free_splitres(argv, argc);
    bool same = !parsed || memcmp(fake.allowed, s->allowed, sizeof(s->allowed)) == 0;
    free_firstargs(&fake);
    clear_rules(&fake);
    return same;
}

/* The command rules as Redis 7.2+ prints them: "+@all" or "-@all" (can
 * the selector run commands added later?), then the rules in the order
 * they were written, each overridden one dropped (record_rule). */
sds acl_selector_describe_commands(const acl_selector_t *s) {
    sds out = sds_new(get_bit(s, ACL_FUTURE_BIT) ? "+@all" : "-@all");
    if (s->rules) out = sds_catprintf(out, " %s", s->rules);
    rl_assert(rules_rebuild(s, out));
    return out;
}

static sds cat_keypat(sds out, const acl_keypat_t *k) {
    if (k->perm == ACL_KEY_ALL) out = sds_cat(out, "~");
    else if (k->perm == ACL_KEY_READ) out = sds_cat(out, "%R~");
    else out = sds_cat(out, "%W~");
    return sds_catlen(out, k->pattern, sds_len(k->pattern));
}

sds acl_selector_describe_keys(const acl_selector_t *s) {
    if (s->flags & ACL_SEL_ALLKEYS) return sds_new("~*");
    sds out = sds_empty();
    for (int i = 0; i < s->nkeys; i++) {
        if (i) out = sds_cat(out, " ");
        out = cat_keypat(out, &s->keys[i]);
    }
    return out;
}

sds acl_selector_describe_channels(const acl_selector_t *s) {
    if (s->flags & ACL_SEL_ALLCHANNELS) return sds_new("&*");
    sds out = sds_empty();
    for (int i = 0; i < s->nchannels; i++) {
        if (i) out = sds_cat(out, " ");
        out = sds_cat(out, "&");
        out = sds_catlen(out, s->channels[i], sds_len(s->channels[i]));
    }
    return out;
}

/* "~a %R~b resetchannels &c +@all": one selector as rules. */
static sds describe_selector(sds out, const acl_selector_t *s) {
    if (s->flags & ACL_SEL_ALLKEYS) {
        out = sds_cat(out, "~* ");
    } else {
        for (int i = 0; i < s->nkeys; i++) out = sds_cat(cat_keypat(out, &s->keys[i]), " ");
    }
    if (s->flags & ACL_SEL_ALLCHANNELS) {
        out = sds_cat(out, "&* ");
    } else {
        out = sds_cat(out, "resetchannels ");
        for (int i = 0; i < s->nchannels; i++) {
            out = sds_cat(out, "&");
            out = sds_catlen(out, s->channels[i], sds_len(s->channels[i]));
            out = sds_cat(out, " ");
        }
    }
    sds rules = acl_selector_describe_commands(s);
    out = sds_catlen(out, rules, sds_len(rules));
    sds_free(rules);
    return out;
}

const char *acl_user_describe(acl_user_t *u) {
    if (u->described) return u->described;
    static const struct {
        unsigned flag;
        const char *name;
    } flags[] = {{ACL_USER_ENABLED, "on"}, {ACL_USER_DISABLED, "off"}, {ACL_USER_NOPASS, "nopass"}, {ACL_USER_SANITIZE_SKIP, "skip-sanitize-payload"}, {ACL_USER_SANITIZE, "sanitize-payload"}};
    sds out = sds_empty();
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (u->flags & flags[i].flag) out = sds_catprintf(out, "%s ", flags[i].name);
    for (int i = 0; i < u->npasswords; i++) out = sds_catprintf(out, "#%s ", u->passwords[i]);
    for (int i = 0; i < u->nsel; i++) {
        if (i) out = sds_cat(out, " (");
        out = describe_selector(out, u->sel[i]);
        if (i) out = sds_cat(out, ")");
    }
    u->described = out;
    return out;
}
