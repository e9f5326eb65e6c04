/* test_override_cxx.cc: C++'s operator new and delete from libebbmalloc.so
 * (src/override_cxx.c).  Built against libstdc++ and run under
 * LD_PRELOAD=libebbmalloc.so by run_tests.sh: it proves that new and
 * delete are ours (dladdr names the library, our class sizes show), that
 * every form allocates, aligns and frees, and that a request that cannot
 * be met behaves as the standard says: the new-handler is called until it
 * gives up, then std::bad_alloc, and nullptr from the nothrow forms. */
#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>

#include <cstdlib>
#include <new>
#include <vector>

#include "test_help.h"

static bool ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* The operator this program calls resolves into libebbmalloc.so, and the
 * blocks it returns have ebbmalloc's class sizes. */
static int test_new_is_ebbmalloc(void) {
    void *(*op)(std::size_t) = &::operator new;
    void (*del)(void *) noexcept = &::operator delete;
    Dl_info a, b;
    CHECK(dladdr((void *)op, &a) != 0 && a.dli_fname != NULL);
    CHECK(ends_with(a.dli_fname, "libebbmalloc.so"));
    CHECK(dladdr((void *)del, &b) != 0 && b.dli_fname != NULL);
    CHECK(ends_with(b.dli_fname, "libebbmalloc.so"));
    char *p = new char[130];
    CHECK_EQ(malloc_usable_size(p), 144); /* glibc: 136, jemalloc: 160 */
    delete[] p;
    return 0;
}

struct alignas(64) Line {
    char bytes[64];
};
struct alignas(4096) Page {
    char bytes[100];
};

/* Every form: scalar and array, sized delete, nothrow, over-aligned. */
static int test_every_form(void) {
    std::vector<char *> kept;
    for (std::size_t n = 0; n < 70000; n = n * 2 + 1) {
        char *p = new char[n + 1];
        memset(p, (int)(n & 0x7f), n + 1);
        kept.push_back(p);
    }
    for (std::size_t i = 0, n = 0; i < kept.size(); i++, n = n * 2 + 1) {
        CHECK(kept[i][n] == (char)(n & 0x7f));
        delete[] kept[i];
    }
    long *l = new long(42);
    CHECK(*l == 42);
    ::operator delete(l, sizeof(long)); /* sized */
    int *nt = new (std::nothrow) int[1000];
    CHECK(nt != NULL);
    nt[999] = 7;
    delete[] nt;
    Line *ln = new Line[5];
    CHECK((uintptr_t)ln % 64 == 0);
    memset(ln, 1, sizeof(Line) * 5);
    delete[] ln;
    Page *pg = new Page;
    CHECK((uintptr_t)pg % 4096 == 0);
    delete pg;
    Page *pn = new (std::nothrow) Page;
    CHECK(pn != NULL && (uintptr_t)pn % 4096 == 0);
    delete pn;
    void *raw = ::operator new(300, std::align_val_t(256));
    CHECK((uintptr_t)raw % 256 == 0);
    ::operator delete(raw, 300, std::align_val_t(256));
    return 0;
}

static volatile std::size_t huge_n = SIZE_MAX / 4; /* hidden from the compiler */
static char *volatile sink;                        /* keeps the compiler from eliding a new */

/* new char[huge_n] throws std::bad_alloc. */
static bool huge_new_throws(void) {
    try {
        sink = new char[huge_n];
    } catch (const std::bad_alloc &) {
        return true;
    }
    return false;
}

static int test_failure(void) {
    CHECK(huge_new_throws());
    bool threw = false;
    try {
        void *p = ::operator new(huge_n, std::align_val_t(64));
        ::operator delete(p);
    } catch (const std::bad_alloc &) {
        threw = true;
    }
    CHECK(threw);
    CHECK(new (std::nothrow) char[huge_n] == NULL);
    CHECK(::operator new(huge_n, std::align_val_t(64), std::nothrow) == NULL);
    return 0;
}

static int handler_calls;
static void give_up_after_three(void) {
    if (++handler_calls == 3)
        std::set_new_handler(NULL);
}

/* The new-handler runs between attempts until it removes itself. */
static int test_new_handler(void) {
    handler_calls = 0;
    std::set_new_handler(give_up_after_three);
    bool threw = huge_new_throws();
    std::set_new_handler(NULL);
    CHECK(threw);
    CHECK_EQ(handler_calls, 3);
    return 0;
}

int main(void) {
    RUN_TEST(test_new_is_ebbmalloc);
    RUN_TEST(test_every_form);
    RUN_TEST(test_failure);
    RUN_TEST(test_new_handler);
    return TEST_REPORT("test_override_cxx");
}
