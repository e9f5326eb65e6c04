#!/usr/bin/env bash
# fetch-lua.sh: the Lua 5.1.5 the server's scripting runs on, from Debian's
# source package of lua5.1, with our patches applied (deps/lua/patches).
#
# Usage: fetch-lua.sh DEST
#   DEST (deps/lua/lua-5.1.5) receives the patched tree; src/Makefile
#   compiles its src/*.c with the build's own flags (so the ASan/UBSan and
#   fuzz builds instrument the VM too) and runs this script when DEST is
#   missing or older than a patch.
#
# Why not Debian's liblua5.1: the sandbox needs what stock Lua lacks
# (read-only tables, bounded and interruptible library calls) and the fixes
# for the published parser/lexer/unpack vulnerabilities; see
# deps/lua/README.md.  The upstream tarball is fetched from the Debian
# archive apt already uses (no other network), checked against its
# published SHA-256, and cached beside the patches, so a second build or a
# rebuilt tree never downloads again.  Nothing of Lua is committed.
set -euo pipefail

dest=${1:?usage: fetch-lua.sh DEST}
here=$(cd "$(dirname "$0")/../.." && pwd)
lua_dir=$here/deps/lua
patches=("$lua_dir"/patches/*.patch)
tarball=lua5.1_5.1.5.orig.tar.gz
# Debian 12's lua5.1 5.1.5-9 lists this hash for its orig tarball (.dsc).
sha256=2640fc56a795f29d28ef15e13c34a47e223960b0240e8cb0a82d9b0738695333
cache=$lua_dir/$tarball

# The first Debian archive apt is configured with (deb822 or one-line form).
debian_mirror() {
    local uri
    uri=$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null |
          awk '{print $2}' | grep -v security | head -n 1)
    [ -n "$uri" ] || uri=$(grep -hsE '^deb ' /etc/apt/sources.list 2>/dev/null |
          awk '{print $2}' | grep -v security | head -n 1)
    echo "${uri:-http://deb.debian.org/debian}"
}

if ! { [ -f "$cache" ] && echo "$sha256  $cache" | sha256sum -c --quiet - 2>/dev/null; }; then
    url="$(debian_mirror)/pool/main/l/lua5.1/$tarball"
    echo "fetch-lua: downloading $url" >&2
    tmp=$(mktemp "$cache.XXXXXX")
    trap 'rm -f "$tmp"' EXIT
    if command -v curl >/dev/null; then
        curl -fsSL --retry 3 -o "$tmp" "$url"
    else
        wget -q -O "$tmp" "$url"
    fi
    echo "$sha256  $tmp" | sha256sum -c --quiet - ||
        { echo "fetch-lua: $url does not match the expected SHA-256" >&2; exit 1; }
    mv "$tmp" "$cache"
    trap - EXIT
fi

# Unpack and patch beside DEST, then move into place: an interrupted run
# never leaves a half-patched tree that looks finished.
work=$(mktemp -d "$(dirname "$dest")/.lua-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -xzf "$cache" -C "$work"
for p in "${patches[@]}"; do
    patch --batch -s -p1 -d "$work/lua-5.1.5" < "$p" ||
        { echo "fetch-lua: $p does not apply" >&2; exit 1; }
done
rm -rf "$dest"
mv "$work/lua-5.1.5" "$dest"
touch "$dest/.patched"
echo "fetch-lua: Lua 5.1.5 with ${#patches[@]} patches in $dest" >&2
