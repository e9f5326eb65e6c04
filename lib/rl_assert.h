/* rl_assert.h: invariants as checked documentation, with debug levels.
 *
 * RL_DEBUG (set by `make DEBUG=n`; the sanitizer builds use 2):
 *   0  release: no runtime checks (the default build)
 *   1  rl_assert: cheap checks of a function's contract
 *   2  rl_assert_internal: invariants inside a module (e.g. that every
 *      command replied or blocked)
 *   3  rl_assert_expensive: whole-structure validators (walks)
 * A failed check prints the expression, file and line to stderr and aborts,
 * so the sanitizer or a core dump shows the stack.  Layout facts that a
 * format depends on use static_assert and hold in every build.
 * Libraries and the server both use this header; it includes nothing of the
 * server. */
#ifndef RL_ASSERT_H
#define RL_ASSERT_H

#include <assert.h> /* static_assert */

#ifndef RL_DEBUG
#define RL_DEBUG 0
#endif

void rl_assert_fail(const char *expr, const char *file, int line) __attribute__((noreturn, cold));

#define RL_ASSERT_AT(level, cond)                                                      \
    do {                                                                               \
        if (RL_DEBUG >= (level) && !(cond)) rl_assert_fail(#cond, __FILE__, __LINE__); \
    } while (0)

#define rl_assert(cond) RL_ASSERT_AT(1, cond)
#define rl_assert_internal(cond) RL_ASSERT_AT(2, cond)
#define rl_assert_expensive(cond) RL_ASSERT_AT(3, cond)

#endif
