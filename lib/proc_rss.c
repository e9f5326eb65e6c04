/* proc_rss.c: resident pages by kind of mapping (see proc_rss.h).
 *
 * How each mapping of /proc/self/smaps is classed, first match wins:
 *  1. io: it overlaps one of the caller's io ranges, or it is an
 *     io_uring ring the kernel mapped for us (named anon_inode:[io_uring]);
 *  2. stacks: [stack] (the main thread's), or it holds the stack pointer
 *     of another thread.  Those are read from /proc/self/task/<tid>/syscall
 *     (the pointer is its second field from the end); a thread running at
 *     that instant shows none and its stack is then counted as anon;
 *  3. file: backed by a file (a path), or [vdso]/[vvar], or an anonymous
 *     mapping that starts where a file mapping ends: the loader's .bss of
 *     the binary or of a library;
 *  4. anon: everything else ([heap], the allocator's mmaps, ...). */
#include "proc_rss.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 64

/* Stack pointers of the other threads (at most max); the count. */
static int thread_stack_pointers(uintptr_t *sp, int max) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < max) {
        if (de->d_name[0] == '.') continue;
        char path[320], line[256];
        snprintf(path, sizeof(path), "/proc/self/task/%s/syscall", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        bool ok = fgets(line, sizeof(line), f) != NULL;
        fclose(f);
        if (!ok || strncmp(line, "running", 7) == 0) continue;
        /* "nr a1 .. a6 sp pc" in a system call, "-1 sp pc" outside one. */
        char *tok[16];
        int ntok = 0;
        for (char *t = strtok(line, " \n"); t && ntok < 16; t = strtok(NULL, " \n")) tok[ntok++] = t;
        if (ntok >= 3) sp[n++] = (uintptr_t)strtoull(tok[ntok - 2], NULL, 16);
    }
    closedir(d);
    return n;
}

/* A mapping that overlaps a range: the kernel may have merged the range
 * with a neighbour of the same flags (see proc_rss.h). */
static bool in_ranges(uintptr_t start, uintptr_t end, const proc_range_t *r, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (start < r[i].end && end > r[i].start) return true;
    return false;
}

static bool holds_any(uintptr_t start, uintptr_t end, const uintptr_t *sp, int n) {
    for (int i = 0; i < n; i++)
        if (sp[i] >= start && sp[i] < end) return true;
    return false;
}

typedef struct mapping {
    uintptr_t start, end;
    char name[128]; /* "" when anonymous */
} mapping_t;

/* Which counter of *out the mapping's pages go to. */
static size_t *class_of(const mapping_t *m, uintptr_t prev_file_end, const proc_range_t *io, size_t nio,
                        const uintptr_t *sp, int nsp, proc_rss_t *out) {
    if (in_ranges(m->start, m->end, io, nio) || strstr(m->name, "[io_uring]")) return &out->io;
    if (!strcmp(m->name, "[stack]") || (!m->name[0] && holds_any(m->start, m->end, sp, nsp))) return &out->stacks;
    if (m->name[0] == '/' || !strcmp(m->name, "[vdso]") || !strcmp(m->name, "[vvar]")) return &out->file;
    if (!m->name[0] && m->start == prev_file_end) return &out->file;
    return &out->anon;
}

bool proc_rss_read(const proc_range_t *io, size_t nio, proc_rss_t *out) {
    memset(out, 0, sizeof(*out));
    uintptr_t sp[MAX_THREADS];
    int nsp = thread_stack_pointers(sp, MAX_THREADS);
    FILE *f = fopen("/proc/self/smaps", "r"); /* libc's FILE buffer: malloc'd, freed at fclose */
    if (!f) return false;
    char line[512];
    mapping_t m = {0};
    bool have = false;
    uintptr_t prev_file_end = 0, file_end = 0;
    size_t *into = NULL;
    while (fgets(line, sizeof(line), f)) {
        unsigned long start, end;
        int off = 0;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &start, &end, &off) == 2 && off > 0) {
            have = true;
            m.start = start;
            m.end = end;
            snprintf(m.name, sizeof(m.name), "%s", line + off);
            m.name[strcspn(m.name, "\n")] = '\0';
            prev_file_end = file_end;
            into = class_of(&m, prev_file_end, io, nio, sp, nsp, out);
            file_end = m.name[0] == '/' ? m.end : 0;
            continue;
        }
        size_t kb;
        if (have && into && sscanf(line, "Rss: %zu kB", &kb) == 1) {
            *into += kb * 1024;
            out->total += kb * 1024;
        }
    }
    fclose(f);
    out->threads = nsp + 1;
    return have;
}
