/* fault_inject.c: an LD_PRELOAD shim that makes the disk fail on demand,
 * for the fault-injection tests (tests/integration/test_disk_faults.py,
 * which compile it with cc -shared).
 *
 * Loaded into the server (and so into its BGSAVE/BGREWRITEAOF children), it
 * wraps write, writev, pwrite, fsync and fdatasync.  Calls on sockets,
 * pipes and terminals pass straight through; calls on a regular file whose
 * path contains the configured substring obey the control file named by
 * $FAULT_CTL, re-read on every such call (tests rewrite it at will):
 *
 *   <op> <errno> <budget> <path-substring> [<delay-ms>]
 *
 * op is "write", "fsync" or "both"; errno is ENOSPC, EIO or EDQUOT; budget
 * is how many bytes may still be written after the line appeared (a write
 * crossing it is cut short, the next one fails); delay-ms slows every
 * matching write (to hold a child mid-rewrite).  A missing or empty file
 * means no faults.  Test-only: never linked into anything shipped. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

typedef ssize_t write_fn(int, const void *, size_t);
typedef ssize_t writev_fn(int, const struct iovec *, int);
typedef ssize_t pwrite_fn(int, const void *, size_t, off_t);
typedef int sync_fn(int);

static write_fn *real_write;
static writev_fn *real_writev;
static pwrite_fn *real_pwrite;
static sync_fn *real_fsync, *real_fdatasync;

/* The rule in force; `line` is the control file's text it came from, so a
 * rewritten file (a new rule) restarts the byte budget. */
static struct {
    char line[512];
    char op[16];
    char path[256];
    int err;
    long long budget;            /* bytes still allowed, -1 = none left */
    long delay_ms;
} rule;

static void resolve(void) {
    if (real_write) return;
    real_write = (write_fn *)dlsym(RTLD_NEXT, "write");
    real_writev = (writev_fn *)dlsym(RTLD_NEXT, "writev");
    real_pwrite = (pwrite_fn *)dlsym(RTLD_NEXT, "pwrite");
    real_fsync = (sync_fn *)dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = (sync_fn *)dlsym(RTLD_NEXT, "fdatasync");
}

static int errno_named(const char *s) {
    if (!strcmp(s, "ENOSPC")) return ENOSPC;
    if (!strcmp(s, "EDQUOT")) return EDQUOT;
    return EIO;
}

/* Re-read the control file; false when no rule is active. */
static int load_rule(void) {
    const char *ctl = getenv("FAULT_CTL");
    if (!ctl) return 0;
    int fd = open(ctl, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char buf[sizeof(rule.line)];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    if (strcmp(buf, rule.line) != 0) {
        char errname[32];
        long long budget = 0;
        long delay = 0;
        memcpy(rule.line, buf, (size_t)n + 1);
        rule.op[0] = rule.path[0] = '\0';
        if (sscanf(buf, "%15s %31s %lld %255s %ld", rule.op, errname, &budget, rule.path, &delay) < 4) {
            rule.op[0] = '\0';
            return 0;
        }
        rule.err = errno_named(errname);
        rule.budget = budget;
        rule.delay_ms = delay;
    }
    return rule.op[0] != '\0';
}

/* Whether fd is a regular file whose path contains the rule's substring. */
static int fd_matches(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    if (!load_rule()) return 0;
    char link[64], path[4096];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    if (n < 0) return 0;
    path[n] = '\0';
    return strstr(path, rule.path) != NULL;
}

static void maybe_delay(void) {
    if (rule.delay_ms <= 0) return;
    struct timespec ts = {rule.delay_ms / 1000, (rule.delay_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* How many of len bytes may be written now; -1 (errno set) to fail. */
static ssize_t allowed(int fd, size_t len) {
    if (!fd_matches(fd)) return (ssize_t)len;
    if (strcmp(rule.op, "write") && strcmp(rule.op, "both")) {
        maybe_delay();
        return (ssize_t)len;
    }
    maybe_delay();
    if (rule.budget <= 0) {
        errno = rule.err;
        return -1;
    }
    if ((long long)len > rule.budget) len = (size_t)rule.budget;
    rule.budget -= (long long)len;
    return (ssize_t)len;
}

ssize_t write(int fd, const void *p, size_t len) {
    resolve();
    ssize_t ok = allowed(fd, len);
    if (ok < 0) return -1;
    return real_write(fd, p, (size_t)ok);
}

ssize_t pwrite(int fd, const void *p, size_t len, off_t off) {
    resolve();
    ssize_t ok = allowed(fd, len);
    if (ok < 0) return -1;
    return real_pwrite(fd, p, (size_t)ok, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt) {
    resolve();
    size_t total = 0;
    for (int i = 0; i < cnt; i++) total += iov[i].iov_len;
    ssize_t ok = allowed(fd, total);
    if (ok < 0) return -1;
    if ((size_t)ok == total) return real_writev(fd, iov, cnt);
    /* Cut short: write the allowed prefix of the first buffers. */
    size_t left = (size_t)ok, done = 0;
    for (int i = 0; i < cnt && left > 0; i++) {
        size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;
        ssize_t w = real_write(fd, iov[i].iov_base, n);
        if (w < 0) return done ? (ssize_t)done : -1;
        done += (size_t)w;
        left -= (size_t)w;
        if ((size_t)w < n) break;
    }
    return (ssize_t)done;
}

static int sync_common(sync_fn *fn, int fd) {
    if (fd_matches(fd) && (!strcmp(rule.op, "fsync") || !strcmp(rule.op, "both"))) {
        errno = rule.err;
        return -1;
    }
    return fn(fd);
}

int fsync(int fd) {
    resolve();
    return sync_common(real_fsync, fd);
}

int fdatasync(int fd) {
    resolve();
    return sync_common(real_fdatasync, fd);
}
