/* rio.c: buffered, checksummed writes to a file descriptor (see rio.h).
 * The CRC is updated as bytes enter the buffer, so the value a writer
 * appends as a trailer covers exactly what came before it. */
#include "rio.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "crc64.h"

void rio_init(rio_t *r, int fd, bool checksum) {
    r->fd = fd;
    r->mem = NULL;
    r->checksum = checksum;
    r->crc = 0;
    r->written = 0;
    r->err = 0;
    r->used = 0;
    r->autosync = r->unsynced = 0;
}

void rio_set_autosync(rio_t *r, uint64_t bytes) { r->autosync = bytes; }

void rio_init_mem(rio_t *r, bool checksum) {
    rio_init(r, -1, checksum);
    r->mem = sds_empty();
}

sds rio_take_mem(rio_t *r) {
    sds s = r->mem;
    r->mem = NULL;
    return s;
}

int rio_write_all(int fd, const void *p, size_t len) {
    const char *s = p;
    while (len > 0) {
        ssize_t n = write(fd, s, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            /* A non-blocking socket (a diskless RDB child writes to the
             * replica's): wait until it drains, a minute at most. */
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd pf = {.fd = fd, .events = POLLOUT};
                int r = poll(&pf, 1, 60000);
                if (r > 0 || (r < 0 && errno == EINTR)) continue;
                if (r == 0) errno = ETIMEDOUT;
            }
            return -1;
        }
        if (n == 0) {
            errno = ENOSPC;
            return -1;
        }
        s += n;
        len -= (size_t)n;
    }
    return 0;
}

int rio_flush(rio_t *r) {
    if (r->err) return -1;
    if (r->used && rio_write_all(r->fd, r->buf, r->used) != 0) {
        r->err = errno ? errno : EIO;
        return -1;
    }
    r->unsynced += r->used;
    r->used = 0;
    if (r->autosync && r->unsynced >= r->autosync) {
        if (fdatasync(r->fd) != 0) {
            r->err = errno ? errno : EIO;
            return -1;
        }
        r->unsynced = 0;
    }
    return 0;
}

void rio_write(rio_t *r, const void *p, size_t len) {
    if (r->err) return;
    if (r->checksum) r->crc = crc64_update(r->crc, p, len);
    r->written += len;
    if (r->mem) {
        r->mem = sds_catlen(r->mem, p, len);
        return;
    }
    const unsigned char *s = p;
    while (len > 0) {
        if (r->used == RIO_BUF_SIZE && rio_flush(r) != 0) return;
        size_t n = RIO_BUF_SIZE - r->used;
        if (n > len) n = len;
        memcpy(r->buf + r->used, s, n);
        r->used += n;
        s += n;
        len -= n;
    }
}

int rio_fsync_dir(const char *path) {
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) {
        dir[0] = '.';
        dir[1] = '\0';
    } else {
        size_t len = slash == path ? 1 : (size_t)(slash - path);
        if (len >= sizeof(dir)) {
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(dir, path, len);
        dir[len] = '\0';
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int r = fsync(fd);
    int e = errno;
    close(fd);
    errno = e;
    return r;
}
