# benchmark.mk: build rules of redis-like-benchmark, included by src/Makefile.
#
# The tool is standalone: its own sources plus histogram.c, compiled with the
# server's warning flags into $(BUILD_DIR), linked against libc malloc (no
# zmalloc, no libredislike.a) with libevent_core kept on the link line for
# parity with the server build, libm and pthreads.  liburing (Debian's
# liburing-dev) is linked into the tool only, and only when it is installed:
# without it bench_uring.c compiles to a stub and the tool runs on epoll.

BENCH_SRC := redis-like-benchmark.c $(wildcard bench_*.c) histogram.c
BENCH_OBJ := $(patsubst %.c,$(BUILD_DIR)/bench-obj/%.o,$(BENCH_SRC))
BENCH_BIN := $(BUILD_DIR)/redis-like-benchmark
TOOLS := $(BENCH_BIN)
BENCH_HAVE_URING := $(shell pkg-config --exists liburing 2>/dev/null && echo yes)
ifeq ($(BENCH_HAVE_URING),yes)
  BENCH_CFLAGS := -DBENCH_HAVE_URING $(shell pkg-config --cflags liburing)
  BENCH_LIBS := $(shell pkg-config --libs liburing)
endif

# Own object directory: the tool must not pick up objects built with the
# server's allocator defines, and histogram.o is compiled for both.
$(BUILD_DIR)/bench-obj/%.o: %.c $(SETTINGS_FILE)
	@mkdir -p $(BUILD_DIR)/bench-obj
	$(CC) $(RL_CFLAGS) $(BENCH_CFLAGS) -c -o $@ $<

$(BENCH_BIN): $(BENCH_OBJ)
	$(CC) $(RL_LDFLAGS) -o $@ $(BENCH_OBJ) $(BENCH_LIBS) -levent_core -lm -pthread

-include $(BENCH_OBJ:.o=.d)

.PHONY: bench-clean
bench-clean:
	rm -rf $(BUILD_DIR)/bench-obj
clean: bench-clean
