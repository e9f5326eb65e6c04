# redis-like top-level Makefile.
#
#   make                build src/redis-like-server (+ tools) with the default allocator
#   make run            build and start the server with redis-like.conf
#   make test           build and run every test (layers, unit, integration, ebbmalloc)
#   make check-layers   fail on an include that points up the server's layers or a call cycle
#   make test-allocators  the integration suite on every allocator build
#   make test-io-uring    the integration suite with the io_uring socket engine
#   make test-epoll       the integration suite with the epoll socket engine
#   make shootout       allocator memory comparison: tables and plots (see below)
#   make advise RDB=dump.rdb [REPLAY=workload.aof|monitor.txt]
#                       the same comparison on your own data and workload
#   make MALLOC=libc|jemalloc|tcmalloc|tcmalloc_minimal|ebbmalloc
#   make USE_JEMALLOC=yes|no USE_TCMALLOC=yes USE_TCMALLOC_MINIMAL=yes USE_EBBMALLOC=yes
#   make SANITIZER=address|undefined
#
# Everything is delegated to src/Makefile, which owns the allocator choice and
# remembers the last build's settings (src/.make-settings) so that switching
# allocator or sanitizer rebuilds everything instead of mixing objects.

PYTHON := /usr/bin/python3
export PYTHON

.PHONY: all deps test-deps run test check-layers test-integration test-io-uring test-epoll test-ebbmalloc test-allocators test-sanitizers fuzz fuzz-build format format-check clean distclean shootout advise

all: deps
	$(MAKE) -C src

# Build packages only for `make`; test packages for the test and tool targets.
deps:
	@utils/install-deps.sh build

test-deps:
	@utils/install-deps.sh test

run: all
	src/redis-like-server redis-like.conf

test: test-deps all
	$(MAKE) check-layers
	$(MAKE) -C src unit-tests
	$(MAKE) test-ebbmalloc
	$(MAKE) test-integration

# Every include in src/ points down or inside its layer, and no calls go
# round a circle (docs/development.md, "Layers"): the call check reads the objects.
check-layers: all
	$(PYTHON) utils/dev/check-layers.py

test-integration:
	$(PYTHON) -m pytest -q tests/integration $(PYTEST_ARGS)

# The whole integration suite again with every redis-like-server started
# with one engine (conftest.py adds $RL_SERVER_ARGS), so both socket
# engines pass the same tests.  The default, `auto`, is io_uring where the
# kernel allows it (6.1+), so `make test` covers io_uring there and
# test-epoll the fallback; test-io-uring insists on io_uring.
test-io-uring: test-deps all
	RL_SERVER_ARGS="--io-engine io_uring" $(PYTHON) -m pytest -q tests/integration $(PYTEST_ARGS)

test-epoll: test-deps all
	RL_SERVER_ARGS="--io-engine epoll" $(PYTHON) -m pytest -q tests/integration $(PYTEST_ARGS)

test-ebbmalloc:
	@if [ -f deps/ebbmalloc/Makefile ]; then $(MAKE) -C deps/ebbmalloc test; fi

# The tests where the allocator matters (memory reporting, eviction, lazy
# and active defrag, persistence of every type, scripts' Lua heap, hostile
# sizes) against each allocator build, each in its own build directory
# (build/<allocator>) so the main build is left as it is.  `make test` runs
# the whole suite on the default build; ALLOCATOR_TESTS=tests/integration
# runs the whole suite on each allocator too.
ALLOCATORS ?= libc jemalloc tcmalloc tcmalloc_minimal ebbmalloc
ALLOCATOR_TESTS ?= $(addprefix tests/integration/,test_memory.py test_evict.py test_lazyfree.py \
  test_defrag.py test_server.py test_introspection.py test_strings.py test_keys.py test_hash.py \
  test_list.py test_set.py test_zset.py test_rdb.py test_rdb_blobs.py test_aof.py test_dump.py \
  test_stream_memory.py test_scripting.py test_scripting_hostile.py test_slow_clients.py \
  test_hostile_input.py test_rss_accounting.py)
test-allocators: test-deps
	@set -e; for a in $(ALLOCATORS); do \
	  echo "=== allocator tests with MALLOC=$$a ==="; \
	  $(MAKE) -C src BUILD_DIR=../build/$$a MALLOC=$$a server tools; \
	  RL_SERVER=$(CURDIR)/build/$$a/redis-like-server $(PYTHON) -m pytest -q -m "not slow" $(ALLOCATOR_TESTS) $(PYTEST_ARGS); \
	done

# Unit tests and the integration suite on ASan and UBSan builds.
SANITIZERS ?= address undefined
test-sanitizers: test-deps
	@set -e; for s in $(SANITIZERS); do \
	  echo "=== unit + integration tests with SANITIZER=$$s ==="; \
	  $(MAKE) -C src BUILD_DIR=../build/san-$$s SANITIZER=$$s server tools unit-tests; \
	  RL_SERVER=$(CURDIR)/build/san-$$s/redis-like-server $(PYTHON) -m pytest -q -m "not slow" tests/integration $(PYTEST_ARGS); \
	done

# The allocator shootout (utils/tools/allocator-shootout): each allocator in
# ALLOCATORS built in build/shootout-<alloc>, the same memory scenarios (fill
# small and 1 KB values, churn, lazy free) on a fresh server each, Debian's
# redis-server as a reference; tables, CSV and gnuplot plots in
# shootout-results/<timestamp>/.  N scales every size (default 1M small keys),
# QUIET is the idle time in seconds after churn (default 60), QUICK=yes is the
# tiny run of the test suite; SHOOTOUT_ARGS passes any other option.
#   make shootout ALLOCATORS="libc ebbmalloc" N=200000 QUIET=30
N ?=
QUIET ?=
QUICK ?=
shootout:
	@utils/install-deps.sh gnuplot-nox
	$(PYTHON) utils/tools/allocator-shootout --allocators "$(ALLOCATORS)" \
	  $(if $(N),--n $(N)) $(if $(QUIET),--quiet $(QUIET)) \
	  $(if $(filter yes,$(QUICK)),--quick) $(SHOOTOUT_ARGS)

# Which allocator for your data: the shootout on your RDB (loaded into every
# allocator build and Debian's redis-server) and, with REPLAY, your recorded
# workload replayed on each (an AOF file, a Redis 7 appendonlydir whose RDB
# base, if any, is the RDB, or a `redis-cli MONITOR` capture at its
# recorded pace; PACE=fast sends it as fast as possible), then QUIET
# seconds of idle.  Only loopback test servers are ever contacted; FLUSHALL,
# SHUTDOWN, CONFIG, DEBUG and the like are skipped and counted.  Ends with
# a recommendation in shootout-results/<timestamp>/results.md.
#   make advise RDB=dump.rdb REPLAY=monitor.txt ALLOCATORS="jemalloc ebbmalloc"
RDB ?=
REPLAY ?=
PACE ?=
advise:
	@if [ -z "$(RDB)$(REPLAY)" ]; then echo "make advise: give RDB=file and/or REPLAY=file"; exit 2; fi
	@utils/install-deps.sh gnuplot-nox
	$(PYTHON) utils/tools/allocator-shootout --allocators "$(ALLOCATORS)" \
	  $(if $(RDB),--rdb "$(RDB)") $(if $(REPLAY),--replay "$(REPLAY)") $(if $(PACE),--pace $(PACE)) \
	  $(if $(QUIET),--quiet $(QUIET)) $(SHOOTOUT_ARGS)

# Coverage-guided fuzzing (clang's libFuzzer with ASan and UBSan): one
# target per parser that reads bytes from a file or a socket, each run for
# FUZZ_SECONDS from its seed corpus tests/fuzz/corpus_<name> (the RESP
# target's is tests/fuzz/corpus); findings are kept in build/fuzz/corpus_<name>
# and crashes in build/fuzz/crash-*.  The server's sources (all of src/ but
# main: libFuzzer brings main) and lib/ are compiled once into
# build/fuzz/libfuzzsrv.a and every target links it.
#   make fuzz [FUZZ_SECONDS=60]        every target in turn
#   make fuzz-rdb [FUZZ_SECONDS=...]   one target (resp restore rdb aof config lua cluster)
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := resp restore rdb aof config lua tls cluster
FUZZ_DIR := build/fuzz
LUA_DIR := deps/lua/lua-5.1.5
include deps/lua/lua.mk
FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -DUSE_LIBC_MALLOC -DRL_MALLOC_NAME='"libc"' -DRL_BUILD_ID='"fuzz"' \
  -DRL_DEBUG=0 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -pthread \
  -Isrc -Ilib -I$(LUA_SRC)
FUZZ_LIBS := -levent_core -lm -lssl -lcrypto -pthread
FUZZ_LIB_SRC := $(filter-out src/server_main.c,$(wildcard src/*.c)) $(wildcard lib/*.c)
# Our Lua (deps/lua) is instrumented like the rest: the lua target fuzzes it.
FUZZ_LUA_OBJ := $(patsubst %,$(FUZZ_DIR)/obj/lua/%.o,$(LUA_MODULES))
FUZZ_OBJ := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_LIB_SRC)) $(FUZZ_LUA_OBJ)
# libFuzzer options per target: the largest input worth trying, and the
# config target's parser messages on stderr closed (reports still print).
FUZZ_OPTS_resp := -max_len=4096
FUZZ_OPTS_restore := -max_len=65536
FUZZ_OPTS_rdb := -max_len=65536
FUZZ_OPTS_aof := -max_len=65536
FUZZ_OPTS_config := -max_len=8192 -close_fd_mask=2
FUZZ_OPTS_lua := -max_len=4096 -timeout=20
FUZZ_OPTS_tls := -max_len=8192
FUZZ_OPTS_cluster := -max_len=16384
fuzz_corpus = tests/fuzz/$(if $(filter resp,$(1)),corpus,corpus_$(1))

$(FUZZ_DIR)/obj/%.o: %.c | $(LUA_STAMP)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

$(LUA_STAMP): utils/dev/fetch-lua.sh $(wildcard deps/lua/patches/*.patch)
	utils/dev/fetch-lua.sh $(LUA_DIR)

$(FUZZ_LUA_OBJ): $(FUZZ_DIR)/obj/lua/%.o: $(LUA_STAMP)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) $(LUA_WARN) -MMD -MP -c -o $@ $(LUA_SRC)/$*.c

$(FUZZ_DIR)/libfuzzsrv.a: $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_DIR)/libfuzzsrv.a
	clang $(FUZZ_CFLAGS) -Werror=incompatible-pointer-types -Werror=int-conversion -fsanitize=fuzzer \
	  -o $@ $< $(FUZZ_DIR)/libfuzzsrv.a $(FUZZ_LIBS)

-include $(FUZZ_OBJ:.o=.d)

fuzz-build: $(addprefix $(FUZZ_DIR)/fuzz_,$(FUZZ_TARGETS))

fuzz-%: $(FUZZ_DIR)/fuzz_%
	@mkdir -p $(FUZZ_DIR)/corpus_$*
	UBSAN_OPTIONS=print_stacktrace=1 $(FUZZ_DIR)/fuzz_$* -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $(FUZZ_OPTS_$*) \
	  -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus_$* $(call fuzz_corpus,$*)

fuzz: test-deps
	$(MAKE) -j2 fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do $(MAKE) --no-print-directory fuzz-$$t; done

# Formatting is clang-format's job (.clang-format); CI runs format-check.
# src/command_meta_data.c is generated (utils/dev/gen-command-meta.py) and keeps
# the generator's layout.
FORMAT_FILES = $(filter-out src/command_meta_data.c,$(wildcard src/*.[ch] lib/*.[ch] tools/*/*.[ch] tests/unit/*.[ch] tests/fuzz/*.c \
  deps/ebbmalloc/src/*.[ch] deps/ebbmalloc/include/*.h deps/ebbmalloc/test/*.[ch] deps/ebbmalloc/test/*.cc))
format:
	clang-format -i $(FORMAT_FILES)

format-check: test-deps
	@clang-format --dry-run --Werror $(FORMAT_FILES) && echo "format-check: clean"

clean:
	$(MAKE) -C src clean
	@if [ -f deps/ebbmalloc/Makefile ]; then $(MAKE) -C deps/ebbmalloc clean; fi

distclean: clean
	rm -rf build
