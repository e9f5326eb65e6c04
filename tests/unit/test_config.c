/* test_config.c: the config-file parser (config_load in src/config.c).
 * A good file sets typed values, the command line overrides the file, and a
 * bad line stops loading with the file, the line number and the reason on
 * stderr, which is what an operator reads when the server refuses to start. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "test_help.h"
#include "zmalloc.h"

static char path_[64];

static const char *write_conf(const char *text) {
    strcpy(path_, "/tmp/rl-test-config-XXXXXX");
    int fd = mkstemp(path_);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) abort();
    close(fd);
    return path_;
}

/* Run config_load with stderr captured into err (at most errlen bytes). */
static int load_capturing(rl_config_t *cfg, const char *path, int argc, char **argv, char *err, size_t errlen) {
    fflush(stderr);
    FILE *tmp = tmpfile();
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    int rc = config_load(cfg, path, argc, argv);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(err, 1, errlen - 1, tmp);
    err[n] = '\0';
    fclose(tmp);
    return rc;
}

static int test_values_are_typed(void) {
    rl_config_t cfg;
    config_init_defaults(&cfg);
    const char *p = write_conf("# comment\n\nport 7777\nmaxmemory 1gb\nmaxmemory-policy allkeys-lru\n"
                               "appendonly yes\nhash-max-listpack-entries 64\n");
    char err[512];
    CHECK_EQ_INT(load_capturing(&cfg, p, 0, NULL, err, sizeof(err)), 0);
    CHECK_EQ_INT(cfg.port, 7777);
    CHECK_EQ_INT(cfg.maxmemory, 1024LL * 1024 * 1024);
    CHECK_EQ_INT(cfg.maxmemory_policy, MAXMEMORY_ALLKEYS_LRU);
    CHECK(cfg.appendonly);
    unlink(p);
    config_free(&cfg);
    return 0;
}

static int test_command_line_overrides_file(void) {
    rl_config_t cfg;
    config_init_defaults(&cfg);
    const char *p = write_conf("port 7777\n");
    char *argv[] = {"--port", "7001", "--maxmemory", "10mb"};
    char err[512];
    CHECK_EQ_INT(load_capturing(&cfg, p, 4, argv, err, sizeof(err)), 0);
    CHECK_EQ_INT(cfg.port, 7001);
    CHECK_EQ_INT(cfg.maxmemory, 10LL * 1024 * 1024);
    unlink(p);
    config_free(&cfg);
    return 0;
}

static int test_bad_line_names_its_number(void) {
    struct {
        const char *text, *reason;
    } cases[] = {
        {"port 7000\nmaxmemory-policy sometimes\n", "maxmemory-policy"},
        {"port 7000\n\nno-such-directive 1\n", "no-such-directive"},
        {"port 7000\nport seventy\n", "port"},
        {"port 7000\nport 99999999\n", "port"},
        {"port 7000\nappendonly perhaps\n", "appendonly"},
    };
    int lines[] = {2, 3, 2, 2, 2};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        rl_config_t cfg;
        config_init_defaults(&cfg);
        const char *p = write_conf(cases[i].text);
        char err[1024], want[32];
        CHECK_EQ_INT(load_capturing(&cfg, p, 0, NULL, err, sizeof(err)), -1);
        snprintf(want, sizeof(want), "line %d", lines[i]);
        if (!strstr(err, want) || !strstr(err, cases[i].reason) || !strstr(err, "FATAL CONFIG FILE ERROR")) {
            fprintf(stderr, "  case %zu: stderr was:\n%s\n", i, err);
            CHECK(0);
        }
        unlink(p);
        config_free(&cfg);
    }
    return 0;
}

static int test_missing_file_is_an_error(void) {
    rl_config_t cfg;
    config_init_defaults(&cfg);
    char err[512];
    CHECK_EQ_INT(load_capturing(&cfg, "/nonexistent/redis-like.conf", 0, NULL, err, sizeof(err)), -1);
    CHECK(strstr(err, "/nonexistent/redis-like.conf") != NULL);
    config_free(&cfg);
    return 0;
}

int main(void) {
    RUN_TEST(test_values_are_typed);
    RUN_TEST(test_command_line_overrides_file);
    RUN_TEST(test_bad_line_names_its_number);
    RUN_TEST(test_missing_file_is_an_error);
    return TEST_REPORT("config");
}
