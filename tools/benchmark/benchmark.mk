# tools/benchmark/benchmark.mk: build rules of redis-like-benchmark, included
# by src/Makefile (which owns BUILD_DIR, the settings file and the flags).
#
# The tool is standalone: only its own folder is on its include path, so it
# cannot use a server header or a server library by accident.  It is compiled
# with the server's warning flags into $(BUILD_DIR)/obj/benchmark and linked
# against libc malloc (no zmalloc), libevent_core (kept for parity with the
# server build), libm and pthreads.  liburing (Debian's liburing-dev) is linked
# only when installed: without it bench_uring.c compiles to a stub and the
# tool runs on epoll.

BENCH_DIR := ../tools/benchmark
BENCH_OBJ_DIR := $(OBJ_DIR)/benchmark
BENCH_SRC := $(wildcard $(BENCH_DIR)/*.c)
BENCH_OBJ := $(patsubst $(BENCH_DIR)/%.c,$(BENCH_OBJ_DIR)/%.o,$(BENCH_SRC))
BENCH_BIN := $(BUILD_DIR)/redis-like-benchmark
TOOLS := $(BENCH_BIN)
BENCH_HAVE_URING := $(shell pkg-config --exists liburing 2>/dev/null && echo yes)
ifeq ($(BENCH_HAVE_URING),yes)
  BENCH_CFLAGS := -DBENCH_HAVE_URING $(shell pkg-config --cflags liburing)
  BENCH_LIBS := $(shell pkg-config --libs liburing)
endif

$(BENCH_OBJ_DIR)/%.o: $(BENCH_DIR)/%.c $(SETTINGS_FILE)
	@mkdir -p $(BENCH_OBJ_DIR)
	$(CC) $(RL_CFLAGS) -I$(BENCH_DIR) $(BENCH_CFLAGS) -c -o $@ $<

$(BENCH_BIN): $(BENCH_OBJ)
	$(CC) $(RL_LDFLAGS) -o $@ $(BENCH_OBJ) $(BENCH_LIBS) -lssl -lcrypto -levent_core -lm -pthread

-include $(BENCH_OBJ:.o=.d)
