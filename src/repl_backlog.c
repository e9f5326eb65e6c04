/* repl_backlog.c: the replication backlog, a circular buffer holding the
 * newest `size` bytes of the replication stream (see repl_state.h for the
 * offset invariants).  A replica that lost its link asks PSYNC for the
 * bytes after the last one it applied; when they are still here it gets
 * +CONTINUE and just those bytes, otherwise a full resync.  Pure data: no
 * clients, no I/O. */
#include "repl_state.h"

#include <string.h>

#include "rl_assert.h"
#include "zmalloc.h"

repl_backlog_t *backlog_create(size_t size, long long first_off) {
    repl_backlog_t *b = zcalloc(sizeof(*b));
    b->size = size ? size : 1;
    b->buf = zmalloc(b->size);
    b->first_off = first_off;
    return b;
}

void backlog_free(repl_backlog_t *b) {
    if (!b) return;
    zfree(b->buf);
    zfree(b);
}

void backlog_append(repl_backlog_t *b, const char *p, size_t len) {
    /* Only the newest `size` bytes can be kept. */
    if (len > b->size) {
        size_t skip = len - b->size;
        b->first_off += (long long)(b->histlen + skip);
        b->histlen = 0;
        p += skip;
        len = b->size;
    }
    while (len > 0) {
        size_t room = b->size - b->idx;
        size_t n = len < room ? len : room;
        memcpy(b->buf + b->idx, p, n);
        b->idx = (b->idx + n) % b->size;
        p += n;
        len -= n;
        b->histlen += n;
    }
    if (b->histlen > b->size) {
        b->first_off += (long long)(b->histlen - b->size);
        b->histlen = b->size;
    }
}

bool backlog_has(const repl_backlog_t *b, long long from) {
    return from >= b->first_off && from <= b->first_off + (long long)b->histlen;
}

void backlog_foreach_from(const repl_backlog_t *b, long long from, void (*fn)(void *arg, const char *p, size_t len),
                          void *arg) {
    rl_assert(backlog_has(b, from));
    size_t skip = (size_t)(from - b->first_off);
    size_t len = b->histlen - skip;
    /* The oldest byte sits at idx when the buffer is full, else at 0. */
    size_t start = (b->histlen == b->size ? b->idx : 0);
    size_t pos = (start + skip) % b->size;
    while (len > 0) {
        size_t n = b->size - pos < len ? b->size - pos : len;
        fn(arg, b->buf + pos, n);
        len -= n;
        pos = (pos + n) % b->size;
    }
}

static void copy_piece(void *arg, const char *p, size_t len) {
    char **dst = arg;
    memcpy(*dst, p, len);
    *dst += len;
}

void backlog_resize(repl_backlog_t *b, size_t size) {
    if (size == 0) size = 1;
    if (size == b->size) return;
    size_t keep = b->histlen < size ? b->histlen : size;
    char *nbuf = zmalloc(size);
    long long from = b->first_off + (long long)(b->histlen - keep);
    char *w = nbuf;
    if (keep) backlog_foreach_from(b, from, copy_piece, &w);
    zfree(b->buf);
    b->buf = nbuf;
    b->size = size;
    b->histlen = keep;
    b->idx = keep % size;
    b->first_off = from;
}
