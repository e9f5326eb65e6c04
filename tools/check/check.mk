# tools/check/check.mk: build rules of redis-like-check-rdb and
# redis-like-check-aof, included by src/Makefile.
#
# Both tools link the server library (libredislike.a + libcore.a), so they
# validate files with the very loader and parser the server uses; they run no
# event loop and open no sockets.

CHECK_DIR := ../tools/check
CHECK_OBJ_DIR := $(OBJ_DIR)/check
CHECK_RDB_BIN := $(BUILD_DIR)/redis-like-check-rdb
CHECK_AOF_BIN := $(BUILD_DIR)/redis-like-check-aof
CHECK_TOOLS := $(CHECK_RDB_BIN) $(CHECK_AOF_BIN)

$(CHECK_OBJ_DIR)/%.o: $(CHECK_DIR)/%.c $(SETTINGS_FILE) | $(LUA_STAMP)
	@mkdir -p $(CHECK_OBJ_DIR)
	$(CC) $(SERVER_CFLAGS) -c -o $@ $<

$(BUILD_DIR)/redis-like-check-%: $(CHECK_OBJ_DIR)/check_%.o $(LIBS_ALL) $(EBB_LIB)
	$(CC) $(RL_LDFLAGS) -o $@ $< $(LIBS_ALL) $(RL_LIBS)

-include $(CHECK_OBJ_DIR)/check_rdb.d $(CHECK_OBJ_DIR)/check_aof.d
