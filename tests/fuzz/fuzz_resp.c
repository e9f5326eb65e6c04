/* fuzz_resp.c: libFuzzer target for the request parser (src/resp.c).
 *
 * The input is fed to the parser in pieces whose sizes come from the first
 * input byte, as a socket would deliver it, with both the authenticated and
 * the unauthenticated limits; every complete request's argv is checked for
 * sane lengths and freed.  Built and run by `make fuzz` (clang's
 * -fsanitize=fuzzer,address,undefined). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "resp.h"
#include "sds.h"
#include "zmalloc.h"

static void *make_arg(void *ctx, const char *p, size_t len) {
    (void)ctx;
    return sds_newlen(p, len);
}

static void free_arg(void *ctx, void *arg) {
    (void)ctx;
    sds_free(arg);
}

static void run(const uint8_t *data, size_t size, size_t step, bool unauth) {
    resp_parser_t p;
    resp_parser_init(&p, make_arg, free_arg, NULL);
    resp_limits_t lim = {1024 * 1024, unauth};
    sds buf = sds_empty();
    size_t pos = 0, fed = 0;
    while (fed < size) {
        size_t n = size - fed < step ? size - fed : step;
        buf = sds_catlen(buf, data + fed, n);
        fed += n;
        for (;;) {
            int r = resp_parse(&p, buf, sds_len(buf), &pos, &lim);
            if (r == RESP_NEED_MORE) break;
            if (r == RESP_ERR) goto done; /* the connection would close */
            int argc;
            void **argv = resp_take_argv(&p, &argc);
            for (int i = 0; i < argc; i++) {
                if (sds_len(argv[i]) > size) __builtin_trap();
                sds_free(argv[i]);
            }
            resp_reset(&p);
        }
        if (pos > 0) { /* drop consumed bytes, as conn.c does */
            if (pos >= sds_len(buf)) sds_clear(buf);
            else sds_range(buf, (ssize_t)pos, -1);
            pos = 0;
        }
    }
done:
    resp_parser_free(&p);
    sds_free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    size_t step = (size_t)(data[0] % 64) + 1;
    run(data + 1, size - 1, step, false);
    run(data + 1, size - 1, size, true);
    return 0;
}
