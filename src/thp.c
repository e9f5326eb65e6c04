/* thp.c: transparent huge pages, as Redis 7.0's disable-thp handles them.
 *
 * With the kernel's THP mode "always", a fork's copy-on-write copies 2 MB
 * for a write to one byte of a huge page, and RSS grows with pages the
 * dataset touches only in part, so a BGSAVE under write load can double
 * memory.  disable-thp (yes by default) turns huge pages off for this
 * process alone with prctl(PR_SET_THP_DISABLE), which its forked children
 * inherit.  In "madvise" or "never" mode nothing is done: huge pages then
 * come only where an allocator asks for them (MADV_HUGEPAGE), and the
 * prctl would refuse those too.  Redis does the same; start-up logs a
 * warning when "always" stays in force.  Called once, before the data is
 * loaded, so that no mapping of the dataset was made with huge pages. */
#include "thp.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

#include "log.h"

#define THP_ENABLED_FILE "/sys/kernel/mm/transparent_hugepage/enabled"

bool thp_always(const char *sysfs_text) { return strstr(sysfs_text, "[always]") != NULL; }

static bool kernel_mode_always(void) {
    char buf[128] = "";
    FILE *f = fopen(THP_ENABLED_FILE, "r");
    if (!f) return false; /* no THP in this kernel */
    bool ok = fgets(buf, sizeof(buf), f) != NULL;
    fclose(f);
    return ok && thp_always(buf);
}

void thp_apply(const server_t *srv) {
    if (!kernel_mode_always()) return;
    if (srv->cfg.disable_thp) {
        if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0) return;
        log_msg(LL_WARNING, "Could not turn transparent huge pages off for this process (prctl: %s).",
                strerror(errno));
    }
    log_msg(LL_WARNING,
            "WARNING: transparent huge pages are set to 'always' in this kernel, so forking for BGSAVE or an "
            "AOF rewrite can copy a 2 MB page for each write, and add latency and memory. Set 'disable-thp yes', "
            "or 'echo madvise > " THP_ENABLED_FILE "' as root (and at boot).");
}
