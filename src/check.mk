# check.mk: build rules of redis-like-check-rdb and redis-like-check-aof,
# included by src/Makefile.
#
# Both tools link the server library (libredislike.a), so they validate
# files with the very loader and parser the server uses; they run no event
# loop and open no sockets.

CHECK_RDB_BIN := $(BUILD_DIR)/redis-like-check-rdb
CHECK_AOF_BIN := $(BUILD_DIR)/redis-like-check-aof
CHECK_TOOLS := $(CHECK_RDB_BIN) $(CHECK_AOF_BIN)

$(CHECK_RDB_BIN): $(BUILD_DIR)/check_rdb.o $(LIB) $(EBB_LIB)
	$(CC) $(RL_LDFLAGS) -o $@ $(BUILD_DIR)/check_rdb.o $(LIB) $(RL_LIBS)

$(CHECK_AOF_BIN): $(BUILD_DIR)/check_aof.o $(LIB) $(EBB_LIB)
	$(CC) $(RL_LDFLAGS) -o $@ $(BUILD_DIR)/check_aof.o $(LIB) $(RL_LIBS)

-include $(BUILD_DIR)/check_rdb.d $(BUILD_DIR)/check_aof.d

.PHONY: check-tools-clean
check-tools-clean:
	rm -f $(CHECK_TOOLS) $(BUILD_DIR)/check_rdb.o $(BUILD_DIR)/check_aof.o
clean: check-tools-clean
