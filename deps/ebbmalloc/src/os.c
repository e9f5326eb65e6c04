/* os.c: every call into the kernel for memory (mmap, munmap, madvise,
 * mremap), the clock and the error channel.  Nothing else in ebbmalloc
 * makes these calls, so porting or instrumenting starts here.
 *
 * Callers: page.c (chunks), huge.c (huge blocks), purge.c/page.c (purge).
 * These functions never allocate and never take locks. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* A fresh read-write mapping of size bytes aligned to align (a power of two
 * >= page): map size + align, then unmap the ragged ends.  NULL on failure,
 * errno preserved as ENOMEM. */
void *_ebb_os_map_aligned(size_t size, size_t align) {
    if (size + align < size)
        return NULL;
    size_t len = size + align;
    char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *start = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    if (start > raw)
        munmap(raw, (size_t)(start - raw));
    size_t tail = (size_t)((raw + len) - (start + size));
    if (tail)
        munmap(start + size, tail);
    return start;
}

void _ebb_os_unmap(void *addr, size_t size) {
    if (size)
        munmap(addr, size);
}

/* Hand pages back: MADV_DONTNEED by default (RSS drops at once and the
 * pages read back as zero), MADV_FREE if configured (cheaper, but RSS only
 * drops under memory pressure). */
void _ebb_os_purge(void *addr, size_t size) {
    int advice = MADV_DONTNEED;
#ifdef MADV_FREE
    if (_ebb_conf.purge_free)
        advice = MADV_FREE;
#endif
    if (madvise(addr, size, advice) != 0 && advice != MADV_DONTNEED)
        madvise(addr, size, MADV_DONTNEED);
}

/* Keep transparent huge pages off a chunk: one 2 MiB page would make a few
 * live blocks pin 2 MiB of RSS and defeat the page-level purge. */
void _ebb_os_no_huge_pages(void *addr, size_t size) {
#ifdef MADV_NOHUGEPAGE
    int saved = errno;
    madvise(addr, size, MADV_NOHUGEPAGE);
    errno = saved;
#else
    (void)addr;
    (void)size;
#endif
}

/* Extend a mapping at its end without moving it; false if the address
 * space after it is taken. */
bool _ebb_os_grow_in_place(void *addr, size_t old_size, size_t new_size) {
    int saved = errno;
    void *p = mremap(addr, old_size, new_size, 0);
    errno = saved;
    return p != MAP_FAILED;
}

/* Move the pages of the mapping [from, from + size) to `to`, replacing
 * what is mapped there (the caller's own fresh mapping): the resident
 * pages go along without being copied or faulted in again. */
bool _ebb_os_move(void *from, size_t size, void *to) {
    int saved = errno;
    void *p = mremap(from, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, to);
    errno = saved;
    return p != MAP_FAILED;
}

uint64_t _ebb_os_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void _ebb_os_write_err(const char *text) {
    size_t n = strlen(text);
    while (n > 0) {
        ssize_t w = write(2, text, n);
        if (w <= 0)
            return;
        text += w;
        n -= (size_t)w;
    }
}

/* ebb_assert's failure path (internal.h): no allocation, then abort. */
void _ebb_assert_fail(const char *expr, const char *file, int line) {
    char num[16];
    int i = (int)sizeof(num) - 1;
    num[i] = '\0';
    unsigned v = line > 0 ? (unsigned)line : 0;
    do {
        num[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v && i > 0);
    _ebb_os_write_err("ebbmalloc: assertion failed: ");
    _ebb_os_write_err(expr);
    _ebb_os_write_err(" at ");
    _ebb_os_write_err(file);
    _ebb_os_write_err(":");
    _ebb_os_write_err(num + i);
    _ebb_os_write_err("\n");
    abort();
}
