/* no_io_uring.c: runs a program in a sandbox whose kernel refuses io_uring,
 * for the socket-engine tests (tests/integration/test_io_engine.py, which
 * compile it with cc).
 *
 *   no_io_uring ENOSYS|EPERM program [args...]
 *
 * It installs a seccomp filter that fails io_uring_setup, io_uring_enter and
 * io_uring_register with the given errno, then execs the program.  ENOSYS is
 * what a kernel built without io_uring answers; EPERM is what
 * `kernel.io_uring_disabled` and container runtimes' seccomp profiles
 * answer.  The filter is inherited across exec and fork, so the server and
 * its children see the same kernel.  Unlike an environment switch read by
 * the server, this exercises the real failure path from the first system
 * call on.  No privilege is needed: PR_SET_NO_NEW_PRIVS allows an
 * unprivileged filter.  Test-only: never linked into anything shipped. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#error "add this architecture's AUDIT_ARCH value"
#endif

/* The io_uring system calls have the same numbers on every architecture
 * (they were added after the tables were unified). */
enum { NR_SETUP = 425, NR_ENTER = 426, NR_REGISTER = 427 };

static int install(int err) {
    struct sock_filter prog[] = {
        /* Another architecture's numbers mean other calls: allow them. */
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_SETUP, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_ENTER, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NR_REGISTER, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
    };
    struct sock_fprog fprog = {.len = sizeof(prog) / sizeof(prog[0]), .filter = prog};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog);
}

int main(int argc, char **argv) {
    if (argc < 3 || (strcmp(argv[1], "ENOSYS") != 0 && strcmp(argv[1], "EPERM") != 0)) {
        fprintf(stderr, "usage: %s ENOSYS|EPERM program [args...]\n", argv[0]);
        return 2;
    }
    int err = strcmp(argv[1], "ENOSYS") == 0 ? ENOSYS : EPERM;
    if (install(err) != 0) {
        fprintf(stderr, "no_io_uring: seccomp: %s\n", strerror(errno));
        return 1;
    }
    execvp(argv[2], argv + 2);
    fprintf(stderr, "no_io_uring: %s: %s\n", argv[2], strerror(errno));
    return 127;
}
