/* acl_user.h: one ACL user, its selectors, and the rule language (see
 * acl.h for how the ACL files divide the work).
 *
 * A user has flags (on/off, nopass, sanitize-payload), a list of password
 * hashes and one or more selectors; the first, the root selector, holds
 * the rules written outside parentheses.  A command is allowed when any
 * selector allows the command and every key and channel it names.
 *
 * Invariants: sel[0] has ACL_SEL_ROOT and no other does; exactly one of
 * ACL_USER_ENABLED / ACL_USER_DISABLED is set; a selector with
 * ACL_SEL_ALLKEYS has no key patterns, one with ACL_SEL_ALLCHANNELS no
 * channel patterns; passwords are 64 lowercase hex digits (SHA-256). */
#ifndef RL_ACL_USER_H
#define RL_ACL_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "commands.h"
#include "sds.h"

/* Command ids index a 1024-bit map per selector, as in Redis; the last bit
 * is never a command: "+@all" sets it, so the rules can tell "+@all minus
 * some" from "nothing plus some" (the first allows future commands). */
#define ACL_CMD_BITS 1024
#define ACL_FUTURE_BIT (ACL_CMD_BITS - 1)

#define ACL_USER_ENABLED (1u << 0)
#define ACL_USER_DISABLED (1u << 1)
#define ACL_USER_NOPASS (1u << 2)
#define ACL_USER_SANITIZE_SKIP (1u << 3)
#define ACL_USER_SANITIZE (1u << 4)

#define ACL_SEL_ROOT (1u << 0)
#define ACL_SEL_ALLKEYS (1u << 1)
#define ACL_SEL_ALLCHANNELS (1u << 2)
#define ACL_SEL_ALLCOMMANDS (1u << 3)

#define ACL_KEY_READ (1u << 0)
#define ACL_KEY_WRITE (1u << 1)
#define ACL_KEY_ALL (ACL_KEY_READ | ACL_KEY_WRITE)

/* Why a rule was refused; acl_rule_error_text() gives Redis's message. */
typedef enum {
    ACL_RULE_OK = 0,
    ACL_RULE_SYNTAX,          /* unknown rule, bad pattern */
    ACL_RULE_NO_SUCH_CMD,     /* unknown command or category */
    ACL_RULE_KEYS_AFTER_ALL,  /* ~pat after allkeys */
    ACL_RULE_CHANS_AFTER_ALL, /* &pat after allchannels */
    ACL_RULE_NO_SUCH_PASS,    /* <pass / !hash not set */
    ACL_RULE_BAD_HASH,        /* #hash not 64 lowercase hex digits */
    ACL_RULE_DUP_USER,        /* a user defined twice in the config */
    ACL_RULE_SUB_FIRSTARG,    /* +cmd|sub|arg */
} acl_rule_err_t;

/* How a key pattern is matched: most are a literal or "prefix*", which
 * need no glob engine on the command path. */
typedef enum { ACL_PAT_GLOB = 0,
               ACL_PAT_EXACT,
               ACL_PAT_PREFIX } acl_pat_kind_t;

typedef struct acl_keypat {
    sds pattern;
    unsigned perm; /* ACL_KEY_* */
    acl_pat_kind_t kind;
    size_t prefix_len; /* ACL_PAT_PREFIX: bytes before the final '*' */
} acl_keypat_t;

typedef struct acl_selector {
    unsigned flags;                      /* ACL_SEL_* */
    uint64_t allowed[ACL_CMD_BITS / 64]; /* bit per command id */
    sds **firstargs;                     /* NULL, or per id a NULL-terminated list of
                                 allowed argv[1] for a blocked command */
    acl_keypat_t *keys;
    int nkeys;
    sds *channels;
    int nchannels;
    sds rules; /* the command rules in the order written (Redis 7.2+): "+get
                  -@string +config|get", NULL when none since +@all/-@all */
} acl_selector_t;

typedef struct acl_user acl_user_t;

struct acl_user {
    sds name;
    unsigned flags; /* ACL_USER_* */
    sds *passwords; /* SHA-256 hex of each password */
    int npasswords;
    acl_selector_t **sel; /* sel[0] is the root selector */
    int nsel;
    sds described;     /* cached acl_user_describe(), NULL if stale */
    bool unrestricted; /* only a root selector allowing everything:
                                  checks can be skipped */
};

/* The command universe: every row of Redis's table, then our own commands
 * without a row.  Built once by acl_cmdtab_init() after commands_init(). */
void acl_cmdtab_init(server_t *srv);
void acl_cmdtab_free(void);
/* Category membership and names of an id (ACL CAT). */
int acl_cmdtab_count(void);
const char *acl_cmdtab_name(int id);
uint64_t acl_cmdtab_categories(int id);

/* What the ACL check needs to know of a command beyond its bit, computed
 * once: which arguments are channels, and for commands whose only key spec
 * is a plain range (GET, MGET, HSET...), that range, so the common case
 * finds its keys without the general extractor. */
typedef enum { ACL_CHAN_NONE = 0,
               ACL_CHAN_FIRST,
               ACL_CHAN_ALL,
               ACL_CHAN_ALL_PATTERNS } acl_chan_kind_t;
typedef enum {
    ACL_KEYS_GENERAL = 0, /* ask cmd_meta_get_keys */
    ACL_KEYS_NONE,        /* a row without key specs */
    ACL_KEYS_RANGE,       /* the range below is the whole key spec */
    ACL_KEYS_SET,         /* SET: argv[1], flags by cmd_meta_set_key_flags */
} acl_keys_kind_t;
typedef struct acl_cmd_info {
    acl_chan_kind_t chan;
    acl_keys_kind_t keys;
    int kfirst, klast, kstep, klimit; /* begin index; find_keys range */
    unsigned kflags;                  /* KSF_* of those keys */
} acl_cmd_info_t;
/* Indexed by command id; immutable after acl_cmdtab_init(). */
extern const acl_cmd_info_t *acl_cmd_infos;

/* acl-pubsub-default: new selectors and "reset" start with all channels
 * (true) or none (false, Redis 7.0's default). */
void acl_set_pubsub_default(bool allchannels);

acl_user_t *acl_user_new(const char *name, size_t len);
void acl_user_free(acl_user_t *u);
/* dst gets src's rules (dst keeps its name). */
void acl_user_copy(acl_user_t *dst, const acl_user_t *src);
/* Apply one rule (may hold binary data for >password). */
acl_rule_err_t acl_user_set_rule(acl_user_t *u, const char *op, size_t len);
const char *acl_rule_error_text(acl_rule_err_t e);
/* Rules given as words, with "(a b)" selectors possibly split over several
 * words, joined back; NULL (and *bad the index of the opening word) if a
 * parenthesis is unmatched.  Caller frees with sds_free_splitres(). */
sds *acl_merge_selector_args(sds *argv, int argc, int *merged, int *bad);
/* Whether s[0..len) holds spaces or NUL (refused in names and patterns). */
bool acl_has_spaces(const char *s, size_t len);

/* "on #<hash> ~* &* +@all (...)": the user as rules (ACL LIST, aclfile).
 * Borrowed from the user's cache. */
const char *acl_user_describe(acl_user_t *u);
/* The command rules of one selector ("+@all -debug"); caller frees. */
sds acl_selector_describe_commands(const acl_selector_t *s);
/* Key / channel patterns as GETUSER shows them ("~a %R~b", "&c"). */
sds acl_selector_describe_keys(const acl_selector_t *s);
sds acl_selector_describe_channels(const acl_selector_t *s);

/* Whether the selector's bit for command id is set. */
static inline bool acl_sel_bit(const acl_selector_t *s, int id) { return (s->allowed[id / 64] >> (id % 64)) & 1; }

#endif
