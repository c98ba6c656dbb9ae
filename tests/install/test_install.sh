#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# numaplace as a new user gets it: `cmake --install` into a temporary prefix, then from there
#   1. the installed files (headers, versioned library, static library, CLI, helper library,
#      man pages, numaplace.pc, CMake package), exactly;
#   2. a separate consumer project: find_package(numaplace) with numaplace::numaplace and
#      numaplace::numaplace_static, and `pkg-config --cflags --libs [--static] numaplace`
#      (static: from a prefix without the shared library, so Libs.private must be complete);
#   3. README.md's example, extracted between its markers and built with README's own compile line;
#   4. the installed CLI, its prefix moved elsewhere: `numaplace topo`, `numaplace run --policy
#      cyclic` (the helper library found relative to the binary, nothing from the build tree) and,
#      copied alone, a failure naming every place it looked;
#   5. the man pages (man -M PREFIX/share/man): section 1, and section 3 (doxygen's, from the headers).
# env: BUILD (the build directory), SRC (the source tree), NPL_SANITIZE (skip when set)
set -u
BUILD=${BUILD:?BUILD=build directory}
SRC=${SRC:?SRC=source tree}
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # ok, bad, skip, summary
if [ -n "${NPL_SANITIZE:-}" ]; then
    skip sanitizer-no-interposer "the installed tree: a sanitizer build has no interposer, and consumers would need -fsanitize=$NPL_SANITIZE"
    summary test_install; exit
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/npl-install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
check() { # description, command...
    what=$1; shift
    if "$@" >"$tmp/out" 2>&1; then ok; else bad "$what"; sed 's/^/  | /' "$tmp/out" | tail -30; fi
}

P=$tmp/prefix
cmake --install "$BUILD" --prefix "$P" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; bad "cmake --install"; exit 1; }
# LIBDIR: lib, lib64 or lib/<multiarch> (GNUInstallDirs, by platform and configured prefix)
libdir=$(cd "$P" && find . -name libnumaplace.so.0 | head -1 | sed 's|^\./||; s|/libnumaplace.so.0$||')
[ -n "$libdir" ] || { bad "no libnumaplace.so.0 installed under $P"; exit 1; }

# ---- 1. the files ----
for f in bin/numaplace include/numaplace.h include/numaplace/migrate.h include/numaplace/omp.h \
         include/numaplace/replicate.h $libdir/libnumaplace.a $libdir/libnumaplace.so \
         $libdir/libnumaplace.so.0 $libdir/numaplace/libnumaplace_preload.so \
         $libdir/pkgconfig/numaplace.pc $libdir/pkgconfig/numaplace-mai.pc include/numaplace/version.h \
         $libdir/cmake/numaplace/numaplaceConfig.cmake \
         $libdir/cmake/numaplace/numaplaceConfigVersion.cmake share/numaplace/report_plot.py \
         include/numaplace.hpp include/mai.h include/numaplace/mai.h $libdir/libnumaplace_mai.so \
         share/doc/numaplace/LICENSE share/doc/numaplace/copyright; do
    [ -f "$P/$f" ] && ok || bad "not installed: $f"
done
for m in "$SRC"/docs/man/*.1; do
    [ -f "$P/share/man/man1/$(basename "$m")" ] && ok || bad "man page not installed: $(basename "$m")"
done
soname=$(readelf -d "$P/$libdir/libnumaplace.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libnumaplace.so.0 ] && ok || bad "SONAME is '$soname', not libnumaplace.so.0"
[ -L "$P/$libdir/libnumaplace.so" ] && [ -L "$P/$libdir/libnumaplace.so.0" ] && ok ||
    bad "libnumaplace.so and .so.0 are not links to the versioned file"
if grep -rl "$BUILD\|$SRC" "$P/$libdir/cmake" "$P/$libdir/pkgconfig" >/dev/null 2>&1; then
    bad "the CMake package or numaplace.pc names the build or source tree"
else ok; fi

# ---- 2. a consumer project ----
mkdir -p "$tmp/consumer"
cat > "$tmp/consumer/consumer.c" <<'EOF'
#include <numaplace.h>
#include <numaplace/migrate.h>
#include <stdio.h>
int main(void)
{
    npl_policy *p;
    if (npl_policy_parse(&p, "cyclic") < 0)
        return 2;
    npl_shape s = {sizeof(double), 1, {100000, 0, 0}, NPL_ROW_MAJOR};
    double *a = npl_alloc_array(&s, p, 0);
    struct npl_check c;
    if (!a || npl_check(a, &c) < 0)
        return 3;
    printf("numaplace %s: %zu pages, %zu placed\n", npl_version(), c.pages, c.placed);
    npl_free(a);
    npl_policy_free(p);
    return c.pages == 196 && c.placed == c.pages ? 0 : 4; /* 800,000 bytes: 196 pages */
}
EOF
cat > "$tmp/consumer/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(consumer C)
find_package(numaplace 0.3 REQUIRED)
add_executable(consumer_shared consumer.c)
target_link_libraries(consumer_shared PRIVATE numaplace::numaplace)
add_executable(consumer_static consumer.c)
target_link_libraries(consumer_static PRIVATE numaplace::numaplace_static)
EOF
check "consumer project: find_package(numaplace) configure" \
    cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$P"
check "consumer project: build" cmake --build "$tmp/consumer/build"
expect="numaplace $(sed -n 's/^project(numaplace VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt"): 196 pages, 196 placed"
runs() { # description, expected output, program...
    what=$1 want=$2; shift 2
    out=$("$@" 2>&1); rc=$?
    [ $rc = 0 ] && [ "$out" = "$want" ] && ok || bad "$what: rc=$rc, output '$out' (want '$want')"
}
runs "find_package, shared" "$expect" "$tmp/consumer/build/consumer_shared"
runs "find_package, static" "$expect" "$tmp/consumer/build/consumer_static"
readelf -d "$tmp/consumer/build/consumer_shared" | grep -q 'NEEDED.*libnumaplace.so.0' && ok ||
    bad "consumer_shared does not need libnumaplace.so.0"
readelf -d "$tmp/consumer/build/consumer_static" | grep -q 'NEEDED.*libnumaplace' &&
    bad "consumer_static needs a shared libnumaplace" || ok

export PKG_CONFIG_PATH="$P/$libdir/pkgconfig"
version=$(sed -n 's/^project(numaplace VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
[ "$(pkg-config --modversion numaplace 2>&1)" = "$version" ] && ok ||
    bad "pkg-config --modversion numaplace: $(pkg-config --modversion numaplace 2>&1), not $version"
# shellcheck disable=SC2046
check "pkg-config: shared build" cc "$tmp/consumer/consumer.c" $(pkg-config --cflags --libs numaplace) \
    -Wl,-rpath,"$P/$libdir" -o "$tmp/pc_shared"
runs "pkg-config, shared" "$expect" "$tmp/pc_shared"
# a static-only prefix: the link succeeds only if Libs.private names what libnumaplace.a needs
S=$tmp/static-prefix
cp -a "$P" "$S" && rm -f "$S/$libdir"/libnumaplace.so*
# shellcheck disable=SC2046
check "pkg-config --static: static build" env PKG_CONFIG_PATH="$S/$libdir/pkgconfig" sh -c \
    'cc "$1" $(pkg-config --cflags numaplace) $(pkg-config --static --libs numaplace) -o "$2"' \
    sh "$tmp/consumer/consumer.c" "$tmp/pc_static"
runs "pkg-config --static" "$expect" "$tmp/pc_static"

# ---- 2b. the version macros, and the MAi and Fortran libraries by find_package and pkg-config ----
IFS=. read -r vmaj vmin vpat <<EOF
$version
EOF
printf '#include <numaplace.h>\n#if NPL_VERSION_MAJOR != %s || NPL_VERSION_MINOR != %s || NPL_VERSION_PATCH != %s\n#error wrong version macros\n#endif\nint main(void) { return 0; }\n' \
    "$vmaj" "$vmin" "$vpat" > "$tmp/version.c"
check "NPL_VERSION_MAJOR.MINOR.PATCH of the installed header = $version" cc -fsyntax-only -I"$P/include" "$tmp/version.c"
mkdir -p "$tmp/parts"
printf '#include <mai.h>\n#include <stdio.h>\nint main(void) { mai_init(NULL); printf("%%d\\n", mai_get_num_nodes() > 0); mai_final(); return 0; }\n' > "$tmp/parts/mai.c"
printf 'program f\n  use numaplace\n  print *, npl_node_count() > 0\nend program f\n' > "$tmp/parts/f.f90"
cat > "$tmp/parts/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.18)
project(parts C Fortran)
find_package(numaplace 0.3 REQUIRED)
add_executable(mai_shared mai.c)
target_link_libraries(mai_shared PRIVATE numaplace::numaplace_mai)
add_executable(mai_static mai.c)
target_link_libraries(mai_static PRIVATE numaplace::numaplace_mai_static)
add_executable(fortran_static f.f90)
target_link_libraries(fortran_static PRIVATE numaplace::numaplace_fortran)
EOF
# shellcheck disable=SC2016
check "pkg-config numaplace-mai" sh -c 'cc "$1" $(pkg-config --cflags --libs numaplace-mai) -Wl,-rpath,"$2" -o "$3"' \
    sh "$tmp/parts/mai.c" "$P/$libdir" "$tmp/pc_mai"
runs "pkg-config numaplace-mai: run" "1" "$tmp/pc_mai"
if [ -f "$P/$libdir/libnumaplace_fortran.a" ] && command -v gfortran >/dev/null 2>&1; then
    check "find_package: numaplace_mai, numaplace_mai_static, numaplace_fortran configure" \
        cmake -S "$tmp/parts" -B "$tmp/parts/build" -DCMAKE_PREFIX_PATH="$P"
    check "find_package: MAi and Fortran consumers build" cmake --build "$tmp/parts/build"
    runs "find_package: numaplace::numaplace_mai" 1 "$tmp/parts/build/mai_shared"
    runs "find_package: numaplace::numaplace_mai_static" 1 "$tmp/parts/build/mai_static"
    runs "find_package: numaplace::numaplace_fortran" " T" "$tmp/parts/build/fortran_static"
    # shellcheck disable=SC2016
    check "pkg-config numaplace-fortran" sh -c 'gfortran "$1" $(pkg-config --cflags --libs numaplace-fortran) -Wl,-rpath,"$2" -o "$3"' \
        sh "$tmp/parts/f.f90" "$P/$libdir" "$tmp/pc_f"
    runs "pkg-config numaplace-fortran: run" " T" "$tmp/pc_f"
else
    skip no-fortran "the Fortran library and its consumers: gfortran missing, or the module was not built"
fi

# ---- 3. README's example, with README's compile line ----
sed -n '/^<!-- readme-example:/,/^<!-- readme-example end -->/p' "$SRC/README.md" |
    sed '1d;$d' | sed '1{/^```c$/d}' | sed '${/^```$/d}' > "$tmp/example.c"
line=$(sed -n '/^<!-- readme-example end -->/,$p' "$SRC/README.md" | grep -m1 '^cc example\.c')
[ -s "$tmp/example.c" ] && [ -n "$line" ] && ok || bad "README.md: no example between the markers, or no compile line"
(cd "$tmp" && LD_LIBRARY_PATH="$P/$libdir" sh -c "$line") > "$tmp/example.out" 2>&1
rc=$?
grep -q "^[0-9]* pages, [0-9]* on their intended node" "$tmp/example.out" && [ $rc = 0 ] && ok ||
    { bad "README example (compile line: $line): rc=$rc"; sed 's/^/  | /' "$tmp/example.out"; }

# ---- 4. the installed CLI, prefix moved: the helper library relative to the binary ----
M=$tmp/moved
mv "$P" "$M"
unset NUMAPLACE_PRELOAD
check "installed numaplace topo" "$M/bin/numaplace" topo
used=$(ldd "$M/bin/numaplace" | sed -n 's/.*libnumaplace.so.0 => \([^ ]*\) .*/\1/p')
[ -n "$used" ] && [ "$(readlink -f "$used")" = "$(readlink -f "$M/$libdir/libnumaplace.so.0")" ] && ok ||
    bad "installed numaplace does not use the prefix's libnumaplace.so.0: $(ldd "$M/bin/numaplace" | grep numaplace)"
check "installed numaplace run --policy cyclic -- true" "$M/bin/numaplace" run --policy cyclic -- true
out=$("$M/bin/numaplace" run --policy cyclic -- cat /proc/self/maps 2>&1)
echo "$out" | grep -q " $M/$libdir/numaplace/libnumaplace_preload.so$" && ok ||
    bad "numaplace run did not preload $M/$libdir/numaplace/libnumaplace_preload.so"
mkdir "$tmp/alone" && cp "$M/bin/numaplace" "$tmp/alone/"
out=$(LD_LIBRARY_PATH="$M/$libdir" "$tmp/alone/numaplace" run --policy cyclic -- true 2>&1); rc=$?
case "$out" in
    *"looked for $tmp/alone/libnumaplace_preload.so, $tmp/alone/../lib/numaplace/libnumaplace_preload.so"*NUMAPLACE_PRELOAD*)
        [ $rc = 125 ] && ok || bad "a lone binary: exit $rc, not 125 (run's own failure)" ;;
    *) bad "a lone binary: rc=$rc, message does not name the places tried: $out" ;;
esac
out=$(NUMAPLACE_PRELOAD="$M/$libdir/numaplace/libnumaplace_preload.so" LD_LIBRARY_PATH="$M/$libdir" \
      "$tmp/alone/numaplace" run --policy cyclic -- true 2>&1) && ok || bad "NUMAPLACE_PRELOAD not used: $out"

# ---- 5. man pages ----
for m in "$SRC"/docs/man/*.1; do
    page=$(basename "$m" .1)
    if command -v man >/dev/null 2>&1; then
        MANPAGER=cat MANWIDTH=80 man -M "$M/share/man" "$page" >"$tmp/man" 2>&1
    else
        skip man "man -M PREFIX/share/man $page: man is not installed (its NAME section is checked instead)"
        sed -n '/^\.SH NAME/,/^\.SH/p' "$M/share/man/man1/$page.1" >"$tmp/man"
    fi
    grep -q "$page" "$tmp/man" && ok || bad "man -M $M/share/man $page: $(head -3 "$tmp/man")"
done

# section 3 (doxygen, when built): the page numaplace-run(1) cites, every link page's target
# installed, and no page named after a struct member
if [ -d "$M/share/man/man3" ]; then
    if command -v man >/dev/null 2>&1; then
        MANPAGER=cat MANWIDTH=80 man -M "$M/share/man" 3 npl_set_thread_policy >"$tmp/man" 2>&1
    else
        cp "$M/share/man/man3/npl_set_thread_policy.3" "$tmp/man" 2>/dev/null
        [ -f "$tmp/man" ] && sed -i "s|^\.so \(.*\)|cat $M/share/man/\1|e" "$tmp/man"
    fi
    grep -q "int npl_set_thread_policy (const npl_topo \*t, const npl_policy \*pol)" "$tmp/man" && ok ||
        bad "man 3 npl_set_thread_policy: $(head -5 "$tmp/man")"
    broken=$(cd "$M/share/man" && for p in man3/*.3; do sed -n 's/^\.so //p' "$p" | head -1; done | sort -u |
             while read -r t; do [ -f "$t" ] || echo "$t"; done)
    [ -z "$broken" ] && ok || bad "section-3 link pages sourcing pages that are not installed: $broken"
    [ ! -e "$M/share/man/man3/pages.3" ] && [ ! -e "$M/share/man/man3/mbind.3" ] && ok ||
        bad "pages named after struct members (pages.3, mbind.3) installed"
else
    skip no-doxygen "section-3 man pages: not built (doxygen missing or NPL_BUILD_MAN=OFF)"
fi

summary test_install
