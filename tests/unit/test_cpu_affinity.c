/* test_cpu_affinity.c: the CPU lists of src/cpu_affinity.c (Redis's
 * *_cpulist syntax: numbers, ranges, ranges with a step), read without
 * touching this process's own affinity. */
#include "cpu_affinity.h"
#include "test_help.h"

static int test_lists(void) {
    cpu_set_t set;
    CHECK_EQ_INT(cpu_affinity_parse("", &set), 0);
    CHECK(cpu_affinity_of("", &set) == NULL);
    CHECK_EQ_INT(cpu_affinity_parse("3", &set), 1);
    CHECK(CPU_ISSET(3, &set));
    CHECK_EQ_INT(cpu_affinity_parse("0,2,4-7", &set), 6);
    CHECK(CPU_ISSET(2, &set) && !CPU_ISSET(3, &set) && CPU_ISSET(7, &set));
    CHECK_EQ_INT(cpu_affinity_parse("0-15:4", &set), 4);
    CHECK(CPU_ISSET(0, &set) && CPU_ISSET(4, &set) && CPU_ISSET(12, &set) && !CPU_ISSET(15, &set));
    CHECK_EQ_INT(cpu_affinity_parse("1-1,1", &set), 1);
    CHECK(cpu_affinity_of("1023", &set) == &set);
    return 0;
}

static int test_refused(void) {
    static const char *bad[] = {"x", "-1", "1-0", "0-3:0", "0,", ",0", "0-", "0-3:", "1 2", "1024", "0-99999999999", NULL};
    cpu_set_t set;
    for (int i = 0; bad[i]; i++) {
        if (cpu_affinity_parse(bad[i], &set) != -1) {
            fprintf(stderr, "  accepted %s\n", bad[i]);
            return 1;
        }
    }
    return 0;
}

int main(void) {
    RUN_TEST(test_lists);
    RUN_TEST(test_refused);
    return TEST_REPORT("cpu_affinity");
}
