/* fuzz_config.c: libFuzzer target for the config-file parser
 * (config_load_text and config_load in src/config.c): quoting and line
 * splitting (sds_splitargs), every directive's value parser (integers,
 * memory units, enums, octal, notify flags, bind lists, output-buffer
 * classes) and the command-line path that turns "--name value" words into
 * lines.
 *
 * The input is read twice: as a config file's text, and split at NUL bytes
 * into command-line words.  After a load that succeeds, every directive's
 * value (CONFIG GET's text) must be accepted back by CONFIG SET's parser
 * and read the same, unless the directive is immutable or the text has
 * characters a config value cannot carry bare (quotes, backslashes,
 * non-printables, runs of spaces).  The parser's messages go to stderr:
 * `make fuzz` runs this target with -close_fd_mask=2.  Built and run by
 * `make fuzz`; nothing reaches a socket or the disk. */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "config.h"
#include "server.h"
#include "zmalloc.h"

static server_t srv;

static bool bare(const char *v) {
    if (!*v || *v == ' ') return false;
    for (const char *p = v; *p; p++) {
        if (*p == '"' || *p == '\'' || *p == '\\' || !isprint((unsigned char)*p)) return false;
        if (p[0] == ' ' && (p[1] == ' ' || p[1] == '\0')) return false;
    }
    return true;
}

static void set_back(void *arg, const char *name, const char *value) {
    (void)arg;
    if (!bare(value)) return;
    const char *err = NULL;
    if (config_set(&srv.cfg, name, value, &err) != 0) {
        if (!strcmp(err, "can't set immutable config")) return;
        __builtin_trap(); /* CONFIG GET's text refused by CONFIG SET */
    }
    char *again = config_get_value(&srv.cfg, name);
    if (!again || strcmp(again, value)) __builtin_trap();
    sds_free(again);
}

static void check_loaded(void) {
    config_foreach_match(&srv.cfg, "*", set_back, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = zmalloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';

    config_init_defaults(&srv.cfg);
    if (config_load_text(&srv.cfg, "fuzz.conf", text) == 0) check_loaded();
    config_free(&srv.cfg);

    /* The same bytes as command-line words, split at NULs. */
    char *argv[64];
    int argc = 0;
    for (size_t i = 0; i <= size && argc < 64; i += strlen(text + i) + 1) argv[argc++] = text + i;
    config_init_defaults(&srv.cfg);
    if (config_load(&srv.cfg, NULL, argc, argv) == 0) check_loaded();
    config_free(&srv.cfg);
    zfree(text);
    return 0;
}
