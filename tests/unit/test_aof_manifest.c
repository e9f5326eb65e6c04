/* test_aof_manifest.c: the multi-part AOF's manifest (src/aof_manifest.c):
 * Redis 7.0's text read and written back unchanged, the names and
 * sequence numbers a rewrite gives the next files, which files become
 * history and in what order, quoting, and each malformed manifest refused
 * with its reason. */
#include <string.h>

#include "aof_manifest.h"
#include "test_help.h"

#define FN "appendonly.aof"

static int test_round_trip(void) {
    const char *text = "file appendonly.aof.2.base.rdb seq 2 type b\n"
                       "file appendonly.aof.1.incr.aof seq 1 type h\n"
                       "file appendonly.aof.2.incr.aof seq 2 type i\n"
                       "file appendonly.aof.3.incr.aof seq 3 type i\n";
    const char *err = NULL;
    aof_manifest_t *am = aof_manifest_parse(text, strlen(text), &err);
    CHECK(am != NULL);
    CHECK_EQ_INT(am->nincr, 2);
    CHECK_EQ_INT(am->nhistory, 1);
    CHECK_EQ_INT(am->base_seq, 2);
    CHECK_EQ_INT(am->incr_seq, 3);
    sds out = aof_manifest_format(am);
    CHECK(strcmp(out, text) == 0);
    sds_free(out);
    aof_manifest_free(am);
    return 0;
}

static int test_keys_in_any_order_comments_and_unknown_keys(void) {
    const char *text = "# written by hand\n"
                       "type b seq 5 file base.rdb\n"
                       "file x.incr seq 7 type i future-key 1\n";
    const char *err = NULL;
    aof_manifest_t *am = aof_manifest_parse(text, strlen(text), &err);
    CHECK(am != NULL);
    CHECK(strcmp(am->base->name, "base.rdb") == 0);
    CHECK_EQ_INT(am->base->seq, 5);
    CHECK(strcmp(am->incr[0]->name, "x.incr") == 0);
    aof_manifest_free(am);
    return 0;
}

static int test_rewrite_names_the_next_files(void) {
    aof_manifest_t *am = aof_manifest_create();
    CHECK(strcmp(aof_manifest_new_base(am, FN, true), "appendonly.aof.1.base.rdb") == 0);
    CHECK(strcmp(aof_manifest_last_incr(am, FN), "appendonly.aof.1.incr.aof") == 0);
    CHECK(strcmp(aof_manifest_last_incr(am, FN), "appendonly.aof.1.incr.aof") == 0); /* no second one */
    /* A rewrite: a new incr file first, then the base when the child ends. */
    CHECK(strcmp(aof_manifest_new_incr(am, FN), "appendonly.aof.2.incr.aof") == 0);
    CHECK(strcmp(aof_manifest_new_base(am, FN, false), "appendonly.aof.2.base.aof") == 0);
    aof_manifest_retire_incrs(am, true);
    sds out = aof_manifest_format(am);
    CHECK(strcmp(out, "file appendonly.aof.2.base.aof seq 2 type b\n"
                      "file appendonly.aof.1.incr.aof seq 1 type h\n"
                      "file appendonly.aof.1.base.rdb seq 1 type h\n"
                      "file appendonly.aof.2.incr.aof seq 2 type i\n") == 0);
    sds_free(out);
    aof_manifest_t *copy = aof_manifest_dup(am);
    aof_manifest_clear_history(copy);
    CHECK_EQ_INT(copy->nhistory, 0);
    CHECK_EQ_INT(am->nhistory, 2); /* the copy is independent */
    /* With AOF off no incr file takes writes: a rewrite retires them all. */
    aof_manifest_retire_incrs(copy, false);
    CHECK_EQ_INT(copy->nincr, 0);
    CHECK(strcmp(copy->history[0]->name, "appendonly.aof.2.incr.aof") == 0);
    aof_manifest_free(copy);
    aof_manifest_free(am);
    return 0;
}

static int test_names_that_need_quoting(void) {
    aof_manifest_t *am = aof_manifest_create();
    aof_manifest_adopt_base(am, "my file.aof");
    sds out = aof_manifest_format(am);
    CHECK(strcmp(out, "file \"my file.aof\" seq 1 type b\n") == 0);
    const char *err = NULL;
    aof_manifest_t *back = aof_manifest_parse(out, sds_len(out), &err);
    CHECK(back && strcmp(back->base->name, "my file.aof") == 0);
    sds_free(out);
    aof_manifest_free(back);
    aof_manifest_free(am);
    return 0;
}

static int refused(const char *text, const char *reason) {
    const char *err = NULL;
    aof_manifest_t *am = aof_manifest_parse(text, strlen(text), &err);
    if (am) {
        aof_manifest_free(am);
        return 1;
    }
    return err && strcmp(err, reason) == 0 ? 0 : 1;
}

static int test_malformed_manifests(void) {
    CHECK_EQ_INT(refused("", "Found an empty AOF manifest"), 0);
    CHECK_EQ_INT(refused("file a seq 1\n", "Invalid AOF manifest file format"), 0);
    CHECK_EQ_INT(refused("file a seq x type i\n", "Invalid AOF manifest file format"), 0);
    CHECK_EQ_INT(refused("file a seq 1 type z\n", "Unknown AOF file type"), 0);
    CHECK_EQ_INT(refused("file a seq 1 type b\nfile b seq 2 type b\n", "Found duplicate base file information"), 0);
    CHECK_EQ_INT(refused("file a seq 3 type i\nfile b seq 3 type i\n", "Found a non-monotonic sequence number"), 0);
    CHECK_EQ_INT(refused("file ../etc/x seq 1 type b\n", "File can't be a path, just a filename"), 0);
    CHECK_EQ_INT(refused("file a seq 1 type b", "The AOF manifest file contains too long line"), 0);
    char longline[1200];
    memset(longline, 'a', sizeof(longline) - 2);
    longline[sizeof(longline) - 2] = '\n';
    longline[sizeof(longline) - 1] = '\0';
    CHECK_EQ_INT(refused(longline, "The AOF manifest file contains too long line"), 0);
    return 0;
}

int main(void) {
    RUN_TEST(test_round_trip);
    RUN_TEST(test_keys_in_any_order_comments_and_unknown_keys);
    RUN_TEST(test_rewrite_names_the_next_files);
    RUN_TEST(test_names_that_need_quoting);
    RUN_TEST(test_malformed_manifests);
    return TEST_REPORT("aof_manifest");
}
