/* oom.c: the process's OOM score, as Redis 7.0's oom-score-adj sets it.
 *
 * oom-score-adj-values gives a score for the master, a replica and a
 * forked child (BGSAVE, AOF rewrite, diskless sync); oom-score-adj says
 * whether to use them: `no` leaves the score alone, `absolute` writes
 * them as they are, `yes`/`relative` adds them to the score the process
 * had when the setting was first turned on (its base, kept in
 * server_t.oom), and every result is clamped to the kernel's -1000..1000.
 * Turning the setting off again writes the base back.  The cron calls
 * oom_apply each tick with the server's role, so a role change takes
 * effect within a tick; the file is written only when the value changes.
 * A child sets its own class right after fork (child.c). */
#include "oom.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

#define OOM_FILE "/proc/self/oom_score_adj"

static bool read_score(int *out) {
    char buf[32];
    int fd = open(OOM_FILE, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
    int saved = errno;
    if (fd >= 0) close(fd);
    if (n <= 0) {
        log_msg(LL_WARNING, "Unable to read oom_score_adj: %s", n < 0 ? strerror(saved) : "empty");
        return false;
    }
    buf[n] = '\0';
    *out = atoi(buf);
    return true;
}

static bool write_score(int val) {
    char buf[32];
    int len = snprintf(buf, sizeof(buf), "%d\n", val);
    int fd = open(OOM_FILE, O_WRONLY | O_CLOEXEC);
    bool ok = fd >= 0 && write(fd, buf, (size_t)len) == len;
    int saved = errno;
    if (fd >= 0) close(fd);
    if (!ok) log_msg(LL_WARNING, "Unable to write oom_score_adj: %s", strerror(saved));
    return ok;
}

bool oom_apply(server_t *srv, int cls) {
    oom_state_t *st = &srv->oom;
    int val;
    if (srv->cfg.oom_score_adj != OOM_ADJ_NO) {
        if (!st->adjusted) {
            if (!read_score(&st->base)) return false;
            st->adjusted = true;
            st->written_valid = false;
        }
        val = srv->cfg.oom_score_adj_values[cls];
        if (srv->cfg.oom_score_adj == OOM_ADJ_RELATIVE) val += st->base;
        val = val < -1000 ? -1000 : val > 1000 ? 1000
                                               : val;
    } else if (st->adjusted) {
        st->adjusted = false;
        val = st->base;
    } else {
        return true;
    }
    if (st->written_valid && st->written == val) return true;
    if (!write_score(val)) {
        st->written_valid = false;
        return false;
    }
    st->written = val;
    st->written_valid = true;
    return true;
}
