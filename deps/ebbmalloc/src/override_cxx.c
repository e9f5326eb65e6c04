/* override_cxx.c: C++'s global operator new and delete, exported by
 * libebbmalloc.so only (like override.c), under their Itanium C++ ABI
 * names so that an LD_PRELOAD puts a C++ program's new and delete straight
 * on the inline fast paths.  Without them libstdc++'s operator new called
 * our malloc through its PLT: one call and one indirect jump more per new
 * and per delete, 5% of alloc-test's time (tcmalloc and mimalloc export
 * these names for the same reason).
 *
 * Written in C: what C++ adds on failure (the new-handler loop, then
 * std::bad_alloc; nullptr for the nothrow forms) is left to the next
 * definition in the lookup order, libstdc++'s own, found with
 * dlsym(RTLD_NEXT) when a request fails.  That one calls malloc (ours)
 * again between handler calls, so a handler that frees memory works, and
 * throws when none is set: exactly the standard's behaviour at no cost to
 * the path that succeeds.  Deletes of every form free the block (the size
 * and alignment arguments are not needed: the pointer says which block it
 * is). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#include "internal.h"

#define EBB_EXPORT __attribute__((visibility("default")))

/* The next definition of the operator named sym, for a request we could
 * not satisfy.  Exits if there is none: a program without libstdc++ has
 * nobody to call operator new, so this is a broken process. */
static void *next_op(const char *sym) {
    void *f = dlsym(RTLD_NEXT, sym);
    if (f == NULL) {
        _ebb_os_write_err("ebbmalloc: out of memory in operator new and no "
                          "libstdc++ definition to report it\n");
        abort();
    }
    return f;
}

typedef void *(*new_fn)(size_t);
typedef void *(*new_nt_fn)(size_t, const void *);
typedef void *(*new_al_fn)(size_t, size_t);
typedef void *(*new_al_nt_fn)(size_t, size_t, const void *);

static inline void *op_new(size_t n, const char *sym) {
    void *p = ebb_fast_malloc(n);
    if (EBB_LIKELY(p != NULL))
        return p;
    return ((new_fn)next_op(sym))(n);
}

static inline void *op_new_nt(size_t n, const void *nt, const char *sym) {
    void *p = ebb_fast_malloc(n);
    if (EBB_LIKELY(p != NULL))
        return p;
    return ((new_nt_fn)next_op(sym))(n, nt);
}

/* std::align_val_t is a size_t enum: passed as a plain size_t. */
static inline void *op_new_al(size_t n, size_t al, const char *sym) {
    void *p = ebb_aligned_alloc(al, n);
    if (EBB_LIKELY(p != NULL))
        return p;
    return ((new_al_fn)next_op(sym))(n, al);
}

static inline void *op_new_al_nt(size_t n, size_t al, const void *nt,
                                 const char *sym) {
    void *p = ebb_aligned_alloc(al, n);
    if (EBB_LIKELY(p != NULL))
        return p;
    return ((new_al_nt_fn)next_op(sym))(n, al, nt);
}

/* operator new / new[] (size_t), and their nothrow forms */
EBB_EXPORT void *_Znwm(size_t n) { return op_new(n, "_Znwm"); }
EBB_EXPORT void *_Znam(size_t n) { return op_new(n, "_Znam"); }
EBB_EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt) {
    return op_new_nt(n, nt, "_ZnwmRKSt9nothrow_t");
}
EBB_EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *nt) {
    return op_new_nt(n, nt, "_ZnamRKSt9nothrow_t");
}

/* C++17 aligned forms */
EBB_EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t al) {
    return op_new_al(n, al, "_ZnwmSt11align_val_t");
}
EBB_EXPORT void *_ZnamSt11align_val_t(size_t n, size_t al) {
    return op_new_al(n, al, "_ZnamSt11align_val_t");
}
EBB_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al,
                                                    const void *nt) {
    return op_new_al_nt(n, al, nt, "_ZnwmSt11align_val_tRKSt9nothrow_t");
}
EBB_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al,
                                                    const void *nt) {
    return op_new_al_nt(n, al, nt, "_ZnamSt11align_val_tRKSt9nothrow_t");
}

/* operator delete / delete[]: plain, sized, nothrow, aligned */
EBB_EXPORT void _ZdlPv(void *p) { ebb_fast_free(p); }
EBB_EXPORT void _ZdaPv(void *p) { ebb_fast_free(p); }
EBB_EXPORT void _ZdlPvm(void *p, size_t n) {
    (void)n;
    ebb_fast_free(p);
}
EBB_EXPORT void _ZdaPvm(void *p, size_t n) {
    (void)n;
    ebb_fast_free(p);
}
EBB_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt) {
    (void)nt;
    ebb_fast_free(p);
}
EBB_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt) {
    (void)nt;
    ebb_fast_free(p);
}
EBB_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t al) {
    (void)al;
    ebb_fast_free(p);
}
EBB_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t al) {
    (void)al;
    ebb_fast_free(p);
}
EBB_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al) {
    (void)n;
    (void)al;
    ebb_fast_free(p);
}
EBB_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al) {
    (void)n;
    (void)al;
    ebb_fast_free(p);
}
EBB_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al,
                                                    const void *nt) {
    (void)al;
    (void)nt;
    ebb_fast_free(p);
}
EBB_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al,
                                                    const void *nt) {
    (void)al;
    (void)nt;
    ebb_fast_free(p);
}
