# redis-like top-level Makefile.
#
#   make                build src/redis-like-server (+ tools) with the default allocator
#   make run            build and start the server with redis-like.conf
#   make test           build and run every test (unit, integration, ebbmalloc)
#   make test-allocators  the integration suite on every allocator build
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

.PHONY: all deps test-deps run test test-integration test-ebbmalloc test-allocators test-sanitizers fuzz fuzz-restore format format-check clean distclean shootout advise

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
	$(MAKE) -C src unit-tests
	$(MAKE) test-ebbmalloc
	$(MAKE) test-integration

test-integration:
	$(PYTHON) -m pytest -q tests/integration $(PYTEST_ARGS)

test-ebbmalloc:
	@if [ -f deps/ebbmalloc/Makefile ]; then $(MAKE) -C deps/ebbmalloc test; fi

# The integration suite against each allocator build, each in its own build
# directory (build/<allocator>) so the main build is left as it is.
ALLOCATORS ?= libc jemalloc tcmalloc tcmalloc_minimal ebbmalloc
test-allocators: test-deps
	@set -e; for a in $(ALLOCATORS); do \
	  echo "=== integration suite with MALLOC=$$a ==="; \
	  $(MAKE) -C src BUILD_DIR=../build/$$a MALLOC=$$a server tools; \
	  RL_SERVER=$(CURDIR)/build/$$a/redis-like-server $(PYTHON) -m pytest -q -m "not slow" tests/integration $(PYTEST_ARGS); \
	done

# Unit tests and the integration suite on ASan and UBSan builds.
SANITIZERS ?= address undefined
test-sanitizers: test-deps
	@set -e; for s in $(SANITIZERS); do \
	  echo "=== unit + integration tests with SANITIZER=$$s ==="; \
	  $(MAKE) -C src BUILD_DIR=../build/san-$$s SANITIZER=$$s server tools unit-tests; \
	  RL_SERVER=$(CURDIR)/build/san-$$s/redis-like-server $(PYTHON) -m pytest -q -m "not slow" tests/integration $(PYTEST_ARGS); \
	done

# The allocator shootout (utils/allocator-shootout): each allocator in
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
	$(PYTHON) utils/allocator-shootout --allocators "$(ALLOCATORS)" \
	  $(if $(N),--n $(N)) $(if $(QUIET),--quiet $(QUIET)) \
	  $(if $(filter yes,$(QUICK)),--quick) $(SHOOTOUT_ARGS)

# Which allocator for your data: the shootout on your RDB (loaded into every
# allocator build and Debian's redis-server) and, with REPLAY, your recorded
# workload replayed on each (an AOF file, or a `redis-cli MONITOR` capture
# at its recorded pace; PACE=fast sends it as fast as possible), then QUIET
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
	$(PYTHON) utils/allocator-shootout --allocators "$(ALLOCATORS)" \
	  $(if $(RDB),--rdb "$(RDB)") $(if $(REPLAY),--replay "$(REPLAY)") $(if $(PACE),--pace $(PACE)) \
	  $(if $(QUIET),--quiet $(QUIET)) $(SHOOTOUT_ARGS)

# Coverage-guided fuzzing of the RESP parser (clang's libFuzzer with ASan
# and UBSan), for FUZZ_SECONDS from the seed corpus in tests/fuzz/corpus.
FUZZ_SECONDS ?= 60
FUZZ_SRC := tests/fuzz/fuzz_resp.c lib/resp.c lib/sds.c lib/zmalloc.c lib/util.c
fuzz: test-deps
	@mkdir -p build/fuzz build/fuzz/corpus
	clang -g -O1 -std=gnu11 -D_GNU_SOURCE -DUSE_LIBC_MALLOC -fsanitize=fuzzer,address,undefined \
	  -Ilib $(FUZZ_SRC) -o build/fuzz/fuzz_resp
	build/fuzz/fuzz_resp -max_total_time=$(FUZZ_SECONDS) -max_len=4096 build/fuzz/corpus tests/fuzz/corpus

# RESTORE's payload path (dump.c, rdb_load.c's value reader), linked with
# the server's own sources (all of src/ but main: libFuzzer brings main).
FUZZ_RESTORE_SRC := tests/fuzz/fuzz_restore.c $(filter-out src/server_main.c,$(wildcard src/*.c)) $(wildcard lib/*.c)
fuzz-restore: test-deps
	@mkdir -p build/fuzz build/fuzz/corpus_restore
	clang -g -O1 -std=gnu11 -D_GNU_SOURCE -DUSE_LIBC_MALLOC -DRL_MALLOC_NAME='"libc"' -DRL_BUILD_ID='"fuzz"' \
	  -fsanitize=fuzzer,address,undefined -Isrc -Ilib $(FUZZ_RESTORE_SRC) -o build/fuzz/fuzz_restore -levent_core -lm -pthread
	build/fuzz/fuzz_restore -max_total_time=$(FUZZ_SECONDS) -max_len=65536 build/fuzz/corpus_restore tests/fuzz/corpus_restore

# Formatting is clang-format's job (.clang-format); CI runs format-check.
FORMAT_FILES = $(wildcard src/*.[ch] lib/*.[ch] tools/*/*.[ch] tests/unit/*.[ch] tests/fuzz/*.c)
format:
	clang-format -i $(FORMAT_FILES)

format-check:
	@clang-format --dry-run --Werror $(FORMAT_FILES) && echo "format-check: clean"

clean:
	$(MAKE) -C src clean
	@if [ -f deps/ebbmalloc/Makefile ]; then $(MAKE) -C deps/ebbmalloc clean; fi

distclean: clean
	rm -rf build
