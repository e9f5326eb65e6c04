/* sds.c: binary-safe dynamic strings (see sds.h for the contract).
 *
 * Layout: [header][bytes...][NUL].  The byte just before the string is the
 * flags byte whose low 3 bits give the header type; the header before it
 * holds len and alloc in 8, 16, 32 or 64-bit fields.  A string gets the
 * smallest header that can describe its capacity, and changes type when it
 * grows past that.  Capacity never counts the header or the NUL.
 *
 * One more type, T5, is only built by sds_embed for strings under 32
 * bytes: the flags byte is the whole header (length in its top 5 bits, no
 * spare capacity).  Such strings live inside a bigger block (a keyspace
 * entry, a hash field) and are never grown in place, so the byte saved
 * per string (two per key: the key and a short value) is what lets a
 * 16-byte key with a 3-byte value fit a 40-byte allocation. */
#include "sds.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zmalloc.h"


struct __attribute__((packed)) sdshdr8 {
    uint8_t len, alloc;
    unsigned char flags;
    char buf[];
};
struct __attribute__((packed)) sdshdr16 {
    uint16_t len, alloc;
    unsigned char flags;
    char buf[];
};
struct __attribute__((packed)) sdshdr32 {
    uint32_t len, alloc;
    unsigned char flags;
    char buf[];
};
struct __attribute__((packed)) sdshdr64 {
    uint64_t len, alloc;
    unsigned char flags;
    char buf[];
};

/* sds_len (sds.h) reads len at these distances before the string. */
_Static_assert(sizeof(struct sdshdr8) == 3 && sizeof(struct sdshdr16) == 5 && sizeof(struct sdshdr32) == 9 &&
                   sizeof(struct sdshdr64) == 17,
               "sds.h's inline sds_len knows the header sizes");

#define HDR(T, s) ((struct sdshdr##T *)((s) - sizeof(struct sdshdr##T)))
/* Growth doubles up to this size, then adds this much at a time. */
#define SDS_MAX_PREALLOC (1024 * 1024)

static int sds_type(const sds s) { return ((unsigned char)s[-1]) & SDS_TYPE_MASK; }

static size_t hdr_size(int type) {
    switch (type) {
        case SDS_T5: return 1;
        case SDS_T8: return sizeof(struct sdshdr8);
        case SDS_T16: return sizeof(struct sdshdr16);
        case SDS_T32: return sizeof(struct sdshdr32);
        default: return sizeof(struct sdshdr64);
    }
}

static int type_for(size_t cap) {
    if (cap < 256) return SDS_T8;
    if (cap < 65536) return SDS_T16;
    if (cap <= UINT32_MAX) return SDS_T32;
    return SDS_T64;
}

size_t sds_alloc(const sds s) {
    switch (sds_type(s)) {
        case SDS_T5: return ((unsigned char)s[-1]) >> 3; /* no spare room */
        case SDS_T8: return HDR(8, s)->alloc;
        case SDS_T16: return HDR(16, s)->alloc;
        case SDS_T32: return HDR(32, s)->alloc;
        default: return HDR(64, s)->alloc;
    }
}

size_t sds_avail(const sds s) { return sds_alloc(s) - sds_len(s); }

static void set_alloc(sds s, size_t cap) {
    switch (sds_type(s)) {
        case SDS_T5: break; /* capacity is the length */
        case SDS_T8: HDR(8, s)->alloc = (uint8_t)cap; break;
        case SDS_T16: HDR(16, s)->alloc = (uint16_t)cap; break;
        case SDS_T32: HDR(32, s)->alloc = (uint32_t)cap; break;
        default: HDR(64, s)->alloc = cap; break;
    }
}

void sds_setlen(sds s, size_t len) {
    switch (sds_type(s)) {
        case SDS_T5: s[-1] = (char)((len << 3) | SDS_T5); break; /* only shrinks: no room */
        case SDS_T8: HDR(8, s)->len = (uint8_t)len; break;
        case SDS_T16: HDR(16, s)->len = (uint16_t)len; break;
        case SDS_T32: HDR(32, s)->len = (uint32_t)len; break;
        default: HDR(64, s)->len = len; break;
    }
    s[len] = '\0';
}

void sds_incrlen(sds s, ssize_t incr) { sds_setlen(s, (size_t)((ssize_t)sds_len(s) + incr)); }

size_t sds_alloc_size(const sds s) { return zmalloc_size(s - hdr_size(sds_type(s))); }

/* Write a header of the given type at buf and return the string pointer. */
static sds init_header(char *buf, int type, size_t len, size_t cap) {
    sds s = buf + hdr_size(type);
    s[-1] = (char)type;
    set_alloc(s, cap);
    sds_setlen(s, len);
    return s;
}

/* Allocate a string of capacity cap; the allocator's usable size is taken as
 * extra capacity (free room for appends) when the header can describe it. */
static sds sds_alloc_cap(size_t len, size_t cap) {
    int type = type_for(cap);
    size_t hs = hdr_size(type);
    char *buf = zmalloc(hs + cap + 1);
    size_t usable = zmalloc_size(buf) - hs - 1;
    if (type_for(usable) == type) cap = usable;
    return init_header(buf, type, len, cap);
}

sds sds_newlen(const void *init, size_t len) {
    sds s = sds_alloc_cap(len, len);
    if (init) memcpy(s, init, len);
    else memset(s, 0, len);
    s[len] = '\0';
    return s;
}

sds sds_new(const char *cstr) { return sds_newlen(cstr, cstr ? strlen(cstr) : 0); }
sds sds_empty(void) { return sds_newlen("", 0); }
sds sds_dup(const sds s) { return sds_newlen(s, sds_len(s)); }

sds sds_fromll(long long v) {
    /* Digits from the end, without printf: loading an RDB turns millions of
     * integers into strings through here. */
    char buf[24];
    char *p = buf + sizeof(buf);
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) *--p = '-';
    return sds_newlen(p, (size_t)(buf + sizeof(buf) - p));
}

void sds_free(sds s) {
    if (s) zfree(s - hdr_size(sds_type(s)));
}

/* Reallocate so that capacity is newcap, changing header type if needed. */
static sds resize(sds s, size_t newcap) {
    int oldtype = sds_type(s), type = type_for(newcap);
    size_t len = sds_len(s);
    if (type == oldtype) {
        size_t hs = hdr_size(type);
        char *buf = zrealloc(s - hs, hs + newcap + 1);
        size_t usable = zmalloc_size(buf) - hs - 1;
        if (type_for(usable) == type) newcap = usable;
        s = buf + hs;
        set_alloc(s, newcap);
        return s;
    }
    sds ns = sds_alloc_cap(len, newcap);
    memcpy(ns, s, len + 1);
    sds_free(s);
    return ns;
}

sds sds_make_room(sds s, size_t addlen) {
    size_t len = sds_len(s);
    if (sds_avail(s) >= addlen) return s;
    size_t need = len + addlen;
    size_t cap = need < SDS_MAX_PREALLOC ? need * 2 : need + SDS_MAX_PREALLOC;
    return resize(s, cap);
}

sds sds_make_room_exact(sds s, size_t addlen) {
    if (sds_avail(s) >= addlen) return s;
    return resize(s, sds_len(s) + addlen);
}

sds sds_remove_free(sds s) {
    size_t len = sds_len(s);
    if (sds_avail(s) == 0) return s;
    sds ns = sds_newlen(s, len);
    sds_free(s);
    return ns;
}

sds sds_catlen(sds s, const void *t, size_t len) {
    size_t cur = sds_len(s);
    s = sds_make_room(s, len);
    memcpy(s + cur, t, len);
    sds_setlen(s, cur + len);
    return s;
}

sds sds_cat(sds s, const char *t) { return sds_catlen(s, t, strlen(t)); }
sds sds_catsds(sds s, const sds t) { return sds_catlen(s, t, sds_len(t)); }

sds sds_cpylen(sds s, const char *t, size_t len) {
    if (sds_alloc(s) < len) s = sds_make_room_exact(s, len - sds_len(s));
    memmove(s, t, len);
    sds_setlen(s, len);
    return s;
}

sds sds_growzero(sds s, size_t len) {
    size_t cur = sds_len(s);
    if (len <= cur) return s;
    s = sds_make_room(s, len - cur);
    memset(s + cur, 0, len - cur + 1);
    sds_setlen(s, len);
    return s;
}

sds sds_catvprintf(sds s, const char *fmt, va_list ap) {
    char stackbuf[512];
    va_list cpy;
    va_copy(cpy, ap);
    int n = vsnprintf(stackbuf, sizeof(stackbuf), fmt, cpy);
    va_end(cpy);
    if (n < 0) return s;
    if ((size_t)n < sizeof(stackbuf)) return sds_catlen(s, stackbuf, (size_t)n);
    size_t cur = sds_len(s);
    s = sds_make_room(s, (size_t)n);
    va_copy(cpy, ap);
    vsnprintf(s + cur, (size_t)n + 1, fmt, cpy);
    va_end(cpy);
    sds_setlen(s, cur + (size_t)n);
    return s;
}

sds sds_catprintf(sds s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    s = sds_catvprintf(s, fmt, ap);
    va_end(ap);
    return s;
}

sds sds_catrepr(sds s, const char *p, size_t len) {
    s = sds_catlen(s, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        switch (c) {
            case '\\':
            case '"': s = sds_catprintf(s, "\\%c", c); break;
            case '\n': s = sds_catlen(s, "\\n", 2); break;
            case '\r': s = sds_catlen(s, "\\r", 2); break;
            case '\t': s = sds_catlen(s, "\\t", 2); break;
            case '\a': s = sds_catlen(s, "\\a", 2); break;
            case '\b': s = sds_catlen(s, "\\b", 2); break;
            default:
                if (isprint(c)) s = sds_catlen(s, (const char *)&c, 1);
                else s = sds_catprintf(s, "\\x%02x", c);
        }
    }
    return sds_catlen(s, "\"", 1);
}

void sds_range(sds s, ssize_t start, ssize_t end) {
    ssize_t len = (ssize_t)sds_len(s);
    if (len == 0) return;
    if (start < 0) {
        start += len;
        if (start < 0) start = 0;
    }
    if (end < 0) {
        end += len;
        if (end < 0) end = 0;
    }
    ssize_t newlen = (start > end) ? 0 : end - start + 1;
    if (newlen != 0) {
        if (start >= len) newlen = 0;
        else if (end >= len) {
            end = len - 1;
            newlen = end - start + 1;
        }
    }
    if (newlen && start) memmove(s, s + start, (size_t)newlen);
    sds_setlen(s, (size_t)newlen);
}

void sds_clear(sds s) { sds_setlen(s, 0); }

void sds_tolower(sds s) {
    for (size_t i = 0, n = sds_len(s); i < n; i++) s[i] = (char)tolower((unsigned char)s[i]);
}

void sds_toupper(sds s) {
    for (size_t i = 0, n = sds_len(s); i < n; i++) s[i] = (char)toupper((unsigned char)s[i]);
}

int sds_cmp(const sds a, const sds b) {
    size_t la = sds_len(a), lb = sds_len(b);
    int c = memcmp(a, b, la < lb ? la : lb);
    if (c) return c;
    return la < lb ? -1 : (la > lb ? 1 : 0);
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Parse one token starting at *pp into *out; returns 0 on success, -1 on
 * unbalanced quotes or a closing quote not followed by a space. */
static int split_token(const char **pp, sds *out) {
    const char *p = *pp;
    sds cur = sds_empty();
    int inq = 0, insq = 0;
    for (;;) {
        if (inq) {
            if (!*p) goto fail;
            if (p[0] == '\\' && p[1] == 'x' && hexval(p[2]) >= 0 && hexval(p[3]) >= 0) {
                char c = (char)(hexval(p[2]) * 16 + hexval(p[3]));
                cur = sds_catlen(cur, &c, 1);
                p += 3;
            } else if (p[0] == '\\' && p[1]) {
                char c;
                p++;
                switch (*p) {
                    case 'n': c = '\n'; break;
                    case 'r': c = '\r'; break;
                    case 't': c = '\t'; break;
                    case 'b': c = '\b'; break;
                    case 'a': c = '\a'; break;
                    default: c = *p; break;
                }
                cur = sds_catlen(cur, &c, 1);
            } else if (*p == '"') {
                if (p[1] && !isspace((unsigned char)p[1])) goto fail;
                p++;
                break;
            } else {
                cur = sds_catlen(cur, p, 1);
            }
        } else if (insq) {
            if (!*p) goto fail;
            if (p[0] == '\\' && p[1] == '\'') {
                p++;
                cur = sds_catlen(cur, "'", 1);
            } else if (*p == '\'') {
                if (p[1] && !isspace((unsigned char)p[1])) goto fail;
                p++;
                break;
            } else {
                cur = sds_catlen(cur, p, 1);
            }
        } else {
            if (!*p || isspace((unsigned char)*p)) break;
            if (*p == '"') inq = 1;
            else if (*p == '\'') insq = 1;
            else cur = sds_catlen(cur, p, 1);
        }
        if (*p) p++;
    }
    *pp = p;
    *out = cur;
    return 0;
fail:
    sds_free(cur);
    return -1;
}

sds *sds_splitargs(const char *line, int *argc) {
    const char *p = line;
    sds *vec = NULL;
    int n = 0;
    *argc = 0;
    for (;;) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p) break;
        sds tok;
        if (split_token(&p, &tok) != 0) {
            sds_free_splitres(vec, n);
            return NULL;
        }
        vec = zrealloc(vec, sizeof(sds) * (size_t)(n + 1));
        vec[n++] = tok;
    }
    if (!vec) vec = zmalloc(sizeof(sds));
    *argc = n;
    return vec;
}

void sds_free_splitres(sds *tokens, int count) {
    if (!tokens) return;
    for (int i = 0; i < count; i++) sds_free(tokens[i]);
    zfree(tokens);
}

size_t sds_hdr_len(const sds s) { return hdr_size(sds_type(s)); }

static int embed_type(size_t len) { return len <= SDS_T5_MAX ? SDS_T5 : type_for(len); }

_Static_assert(SDS_T5_MAX == 31, "sds.h's inline sds_embed_size knows where T5 ends");

/* memcpy for the few bytes of an argument or key: two overlapping loads
 * and stores instead of a libc call. */
static inline void copy_short(char *dst, const char *src, size_t len) {
    if (len >= 8) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, src + len - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + len - 8, &b, 8);
    } else if (len >= 4) {
        uint32_t a, b;
        memcpy(&a, src, 4);
        memcpy(&b, src + len - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + len - 4, &b, 4);
    } else {
        for (size_t i = 0; i < len; i++) dst[i] = src[i];
    }
}

sds sds_embed(void *buf, const void *init, size_t len) {
    if (len <= 16) { /* the usual argument or key: a T5 header */
        sds s = (char *)buf + 1;
        s[-1] = (char)(len << 3 | SDS_T5);
        copy_short(s, init, len);
        s[len] = '\0';
        return s;
    }
    int type = embed_type(len);
    sds s = init_header(buf, type, len, len);
    memcpy(s, init, len);
    s[len] = '\0';
    return s;
}
