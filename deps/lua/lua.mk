# deps/lua/lua.mk: which files of Lua 5.1.5 the server links, shared by
# src/Makefile and the fuzz build (top-level Makefile).  The core VM and the
# four libraries scripts get (base, string, table, math); io, os, debug,
# package and the stand-alone interpreter are left out, so no script can
# reach them however it escapes.  LUA_DIR is set by the including file.
LUA_SRC := $(LUA_DIR)/src
LUA_STAMP := $(LUA_DIR)/.patched
LUA_MODULES := lapi lcode ldebug ldo ldump lfunc lgc llex lmem lobject lopcodes lparser \
  lstate lstring ltable ltm lundump lvm lzio lauxlib lbaselib lmathlib lstrlib ltablib
# Lua is not our code: our warnings stay errors, minus four that its stock
# sources trip (fallthrough comments, indentation, a NULL check, an empty
# loop body clang flags).
LUA_WARN := -Wall -Wextra -Werror -Wno-implicit-fallthrough -Wno-misleading-indentation -Wno-address \
  -Wno-empty-body
