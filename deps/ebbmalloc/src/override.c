/* override.c: the standard malloc family, exported by libebbmalloc.so only
 * (never by the .a), so that LD_PRELOAD=libebbmalloc.so puts ebbmalloc
 * under any program.  Each entry is a thin wrapper; malloc and free use the
 * inline fast paths directly so the drop-in is as fast as the ebb_ API.
 * Semantics follow glibc: free(NULL) is a no-op, realloc(p, 0) frees,
 * memalign/aligned_alloc take any power-of-two alignment, pvalloc rounds
 * the size up to a page. */
#include <errno.h>
#include <stdint.h>

#include "internal.h"

#define EBB_EXPORT __attribute__((visibility("default")))

EBB_EXPORT void *malloc(size_t size) { return ebb_fast_malloc(size); }
EBB_EXPORT void free(void *ptr) { ebb_fast_free(ptr); }
EBB_EXPORT void *calloc(size_t n, size_t size) { return ebb_calloc(n, size); }
EBB_EXPORT void *realloc(void *ptr, size_t size) { return ebb_realloc(ptr, size); }

EBB_EXPORT void *reallocarray(void *ptr, size_t n, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return ebb_realloc(ptr, total);
}

EBB_EXPORT int posix_memalign(void **out, size_t align, size_t size) {
    return ebb_posix_memalign(out, align, size);
}

EBB_EXPORT void *aligned_alloc(size_t align, size_t size) {
    return ebb_aligned_alloc(align, size);
}

EBB_EXPORT void *memalign(size_t align, size_t size) {
    return ebb_aligned_alloc(align, size);
}

EBB_EXPORT void *valloc(size_t size) {
    return _ebb_memalign(EBB_PAGE, size);
}

EBB_EXPORT void *pvalloc(size_t size) {
    if (size > SIZE_MAX - EBB_PAGE) {
        errno = ENOMEM;
        return NULL;
    }
    return _ebb_memalign(EBB_PAGE, ebb_page_round(size ? size : 1));
}

EBB_EXPORT size_t malloc_usable_size(void *ptr) {
    return ebb_usable_size(ptr);
}
