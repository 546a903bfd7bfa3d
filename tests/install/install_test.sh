#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds and runs the three examples against
# that install, not the build tree: C++ through find_package(chatpeg CONFIG), C through
# pkg-config (-std=c99 -Wall -Wextra -Werror -pedantic), Python through the installed package.
# For a shared libchatpeg it also checks the SONAME and that `nm -D --defined-only` lists only
# chatpeg symbols: the C API (chatpeg_*) and the C++ API (chatpeg::api::*, with its typeinfo
# and vtables). Everything else the library is built from stays local (cmake/chatpeg.map).
# In a sanitizer build (static) the examples are built with the same -fsanitize flags.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR VERSION PYTHON(ON|OFF) PYTHON_EXE [SANITIZE]
set -euo pipefail
build=$1 src=$2 version=$3 python=$4 python_exe=$5 sanitize=${6:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "install_test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "install failed"; }
# (pipelines into grep -q would fail under pipefail when grep stops reading early: files instead)
"$prefix/bin/chatpeg" --version >"$tmp/version.out"
grep -qx "chatpeg $version" "$tmp/version.out" || fail "chatpeg --version is not $version"
for h in chatpeg.h chatpeg/chatpeg.h chatpeg/version.h chatpeg/api/template.h chatpeg/api/error.h; do
  [ -f "$prefix/include/$h" ] || fail "header $h not installed"
done
[ -z "$(ls "$prefix/include/chatpeg" | grep -v -x -e api -e chatpeg.h -e version.h)" ] ||
  fail "internal headers installed: $(ls "$prefix/include/chatpeg")"
pc=$(find "$prefix" -name chatpeg.pc)
[ -n "$pc" ] || fail "chatpeg.pc not installed"
libdir=$(dirname "$(dirname "$pc")")
extra=()
if [ -n "$sanitize" ]; then extra=("-fsanitize=$sanitize" -fno-sanitize-recover=all); fi

expect_message() {  # the bundled output holds two get_weather calls
  grep -q '"finish_reason":"tool_calls"' "$1" || fail "$2: no tool_calls finish in $(cat "$1")"
  [ "$(grep -o '"name":"get_weather"' "$1" | wc -l)" -ge 2 ] || fail "$2: calls missing"
}

# C++ through the CMake package.
cmake -S "$src/examples/cpp" -B "$tmp/cpp" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_FLAGS="${extra[*]}" >"$tmp/cpp.log" 2>&1 || { cat "$tmp/cpp.log"; fail "find_package(chatpeg) failed"; }
cmake --build "$tmp/cpp" >>"$tmp/cpp.log" 2>&1 || { cat "$tmp/cpp.log"; fail "C++ example did not build"; }
"$tmp/cpp/parse_example" "$src/examples" >"$tmp/cpp.out" ||
  { cat "$tmp/cpp.out"; fail "C++ example failed"; }
grep -q "chatpeg $version: prompt" "$tmp/cpp.out" || fail "C++ example: $(cat "$tmp/cpp.out")"

# C through pkg-config, strict C99.
export PKG_CONFIG_PATH="$libdir/pkgconfig"
[ "$(pkg-config --modversion chatpeg)" = "$version" ] || fail "pkg-config version"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -Werror -pedantic "${extra[@]}" "$src/examples/c/stream_example.c" \
  $(pkg-config --cflags --libs chatpeg) -o "$tmp/c_example" || fail "C example did not build"
LD_LIBRARY_PATH="$libdir" "$tmp/c_example" "$src/examples" >"$tmp/c.out" || { cat "$tmp/c.out"; fail "C example failed"; }
expect_message "$tmp/c.out" "C example"

# A shared libchatpeg: versioned SONAME, only chatpeg symbols exported, the examples use it.
so=$(find "$libdir" -maxdepth 1 -name 'libchatpeg.so.*' | head -n 1)
if [ -n "$so" ]; then
  readelf -d "$so" >"$tmp/dynamic"
  grep -q "SONAME.*\[libchatpeg.so.${version%%.*}\]" "$tmp/dynamic" || fail "SONAME of $so"
  LD_LIBRARY_PATH="$libdir" ldd "$tmp/c_example" >"$tmp/ldd"
  grep -q "$libdir/libchatpeg.so" "$tmp/ldd" ||
    fail "C example is not linked against the installed shared library"
  nm -D --defined-only "$so" | awk '{ $1 = ""; $2 = ""; sub(/^  /, ""); print }' | c++filt >"$tmp/syms"
  others=$(grep -v -E '^(chatpeg_[a-z_]+|(typeinfo for |typeinfo name for |vtable for )?chatpeg::api::.*)$' "$tmp/syms" || true)
  [ -z "$others" ] || fail "libchatpeg.so exports non-chatpeg symbols: $(echo "$others" | head -n 5)"
  grep -q '^chatpeg_parse$' "$tmp/syms" || fail "chatpeg_parse not exported"
  grep -q '^chatpeg::api::chat_template::parse' "$tmp/syms" || fail "C++ API not exported"
  echo "install_test: shared $(basename "$so"): $(wc -l <"$tmp/syms") symbols, all chatpeg"
fi

# Python through the installed package.
if [ "$python" = ON ]; then
  pkg=$(find "$prefix" -name _chatpeg*.so | head -n 1)
  [ -n "$pkg" ] || fail "the Python extension is not installed"
  PYTHONPATH=$(dirname "$(dirname "$pkg")") \
    "$python_exe" "$src/examples/python/stream_example.py" "$src/examples" >"$tmp/py.out" ||
    { cat "$tmp/py.out"; fail "Python example failed"; }
  grep -q "finish_reason: tool_calls" "$tmp/py.out" || fail "Python example: $(cat "$tmp/py.out")"
else
  echo "install_test: Python example skipped (package not built in this configuration)"
fi
echo "install_test: C++, C$([ "$python" = ON ] && echo ", Python") examples ran against $prefix"
