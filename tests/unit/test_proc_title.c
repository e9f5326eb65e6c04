/* test_proc_title.c: the process title (src/proc_title.c) and the THP
 * mode's parse (src/thp.c): templates expanded with where the server
 * listens, Redis's rules for a template it refuses, and the title written
 * over this very process's command line, read back from /proc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc_title.h"
#include "test_help.h"
#include "thp.h"

/* The expansion, or "(refused)". */
static char *made(const char *tpl, const char *title, const proc_title_place_t *where) {
    static char buf[512];
    sds s = proc_title_make(tpl, title, where);
    snprintf(buf, sizeof(buf), "%s", s ? s : "(refused)");
    sds_free(s);
    return buf;
}

static int test_variables(void) {
    proc_title_place_t tcp = {"127.0.0.1", 6380, 0, "/tmp/r.sock", "/etc/r.conf"};
    CHECK(!strcmp(made("{title} {listen-addr} {server-mode}", "srv", &tcp), "srv 127.0.0.1:6380"));
    CHECK(!strcmp(made("{port}|{tls-port}|{unixsocket}|{config-file}", "t", &tcp), "6380|0|/tmp/r.sock|/etc/r.conf"));
    proc_title_place_t any = {NULL, 7000, 0, NULL, NULL};
    CHECK(!strcmp(made("{title} {listen-addr} {config-file}", "srv", &any), "srv *:7000 -"));
    proc_title_place_t sock_only = {"127.0.0.1", 0, 0, "/tmp/r.sock", NULL};
    CHECK(!strcmp(made("{listen-addr}", "t", &sock_only), "unixsocket:/tmp/r.sock"));
    proc_title_place_t tls_only = {"127.0.0.1", 0, 6443, "/tmp/r.sock", NULL};
    CHECK(!strcmp(made("{listen-addr} {port} {tls-port}", "t", &tls_only), "127.0.0.1:6443 0 6443"));
    return 0;
}

static int test_syntax_and_refusals(void) {
    proc_title_place_t p = {NULL, 7000, 0, "", NULL};
    CHECK(!strcmp(made("{title}{{port}}", "t", &p), "t{port}}"));
    CHECK(!strcmp(made("a}b", "t", &p), "a}b"));
    CHECK(!strcmp(made("  x {title}  ", "t", &p), "x t"));
    CHECK(!strcmp(made("{title}", "t", &p), "(refused)"));      /* blank without its title */
    CHECK(!strcmp(made("{unixsocket}", "t", &p), "(refused)")); /* no socket: blank */
    CHECK(!strcmp(made("", "t", &p), "(refused)"));
    CHECK(!strcmp(made("{title", "t", &p), "(refused)"));
    CHECK(!strcmp(made("{Title} x", "t", &p), "(refused)"));
    CHECK(!strcmp(made("{} x", "t", &p), "(refused)"));
    return 0;
}

static int test_thp_mode(void) {
    CHECK(thp_always("[always] madvise never\n"));
    CHECK(!thp_always("always [madvise] never\n"));
    CHECK(!thp_always("always madvise [never]\n"));
    CHECK(!thp_always(""));
    return 0;
}

static char *cmdline_first(void) {
    static char buf[4096];
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    return buf;
}

static int test_title_over_the_command_line(char **argv, int argc) {
    char *prog = strdup(argv[0]);
    char *path_env = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    proc_title_init(argc, argv);
    CHECK(!strcmp(proc_title_program(), prog));
    CHECK(!strcmp(argv[0], prog)); /* argv now points at copies */
    proc_title_set("a title");
    CHECK(!strcmp(cmdline_first(), "a title"));
    CHECK(!strcmp(argv[0], prog));
    if (path_env) CHECK(!strcmp(getenv("PATH"), path_env)); /* the environment moved intact */
    char longer[8192];
    memset(longer, 'x', sizeof(longer) - 1);
    longer[sizeof(longer) - 1] = '\0';
    proc_title_set(longer); /* cut to the block's size, never past it */
    CHECK(strlen(cmdline_first()) > 0 && strlen(cmdline_first()) < sizeof(longer) - 1);
    free(prog);
    free(path_env);
    return 0;
}

int main(int argc, char **argv) {
    RUN_TEST(test_variables);
    RUN_TEST(test_syntax_and_refusals);
    RUN_TEST(test_thp_mode);
    int rc = test_title_over_the_command_line(argv, argc);
    test_passed_ += rc == 0;
    test_failed_ += rc != 0;
    if (rc) fprintf(stderr, "FAILED: test_title_over_the_command_line\n");
    return TEST_REPORT("proc_title");
}
