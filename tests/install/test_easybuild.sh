#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# EasyBuild installs numaplace from packaging/easybuild/numaplace-VERSION.eb: EasyBuild itself
# pip-installed into a venv under the build directory (kept between runs), the source a local
# tarball of this tree (git archive, with uncommitted changes of tracked files), the product only
# (BUILD_TESTING=OFF), into a temporary prefix with a module file; then the installed command
# runs (EasyBuild's sanity check: numaplace --version and topo) and the module file names it.
# Needs Lmod (scripts/deps.sh). PyPI unreachable: a skip, except under CI=true (a failure).
# env: BUILD (build directory), SRC (source tree)
set -u
BUILD=${BUILD:?BUILD=build directory}
SRC=${SRC:?SRC=source tree}
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # ok, bad, skip, summary
BUILD=$(cd "$BUILD" && pwd) SRC=$(cd "$SRC" && pwd)
version=$(sed -n 's/^project(numaplace VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
ec=$SRC/packaging/easybuild/numaplace-$version.eb
[ -f "$ec" ] || { bad "no easyconfig $ec for version $version"; summary test_easybuild; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/npl-eb.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

venv=$BUILD/easybuild-venv
if ! "$venv/bin/eb" --version >/dev/null 2>&1; then
    rm -rf "$venv"
    if ! { python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check \
             "easybuild-framework==5.4.1" "easybuild-easyblocks==5.4.1"; } >"$tmp/pip.log" 2>&1; then
        rm -rf "$venv"
        if grep -qi 'connection\|resolve\|network\|timed out\|No matching distribution' "$tmp/pip.log" &&
           [ "${CI:-}" != true ]; then
            skip pypi-unreachable "EasyBuild is installed from PyPI, which is unreachable: $(tail -1 "$tmp/pip.log")"
            summary test_easybuild; exit 0
        fi
        sed 's/^/  | /' "$tmp/pip.log" | tail -20; bad "pip install easybuild"; summary test_easybuild; exit 1
    fi
fi
ok
# Lmod: EasyBuild writes and checks module files with it
lmod_init=/usr/share/lmod/lmod/init/profile
[ -f "$lmod_init" ] || { bad "Lmod is not installed (scripts/deps.sh: apt-get install lmod)"; summary test_easybuild; exit 1; }

mkdir -p "$tmp/src"
ref=$(git -C "$SRC" stash create 2>/dev/null || true)
if git -C "$SRC" archive --prefix="numaplace-$version/" "${ref:-HEAD}" 2>/dev/null | gzip -n > "$tmp/src/numaplace-$version.tar.gz" &&
   [ -s "$tmp/src/numaplace-$version.tar.gz" ]; then ok; else bad "git archive of $SRC"; summary test_easybuild; exit 1; fi

# shellcheck disable=SC1090
out=$(set +u; . "$lmod_init" && export PATH="$venv/bin:$PATH" &&
      nice eb "$ec" --sourcepath="$tmp/src" --installpath="$tmp/eb" --buildpath="$tmp/build" \
         --tmpdir="$tmp/t" --containerpath="$tmp/c" --repositorypath="$tmp/r" --prefix="$tmp/eb" \
         --allow-use-as-root-and-accept-consequences --detect-loaded-modules=ignore \
         --parallel=2 --disable-cleanup-tmpdir 2>&1)
rc=$?
echo "$out" | grep -q "COMPLETED: Installation ended successfully" && [ $rc = 0 ] && ok ||
    { echo "$out" | sed 's/^/  | /' | tail -12
      find "$tmp/t" -name out.txt -newer "$ec" -exec tail -25 {} \; 2>/dev/null | sed 's/^/  step| /'
      bad "eb $ec: rc=$rc"; }
P=$tmp/eb/software/numaplace/$version
[ -x "$P/bin/numaplace" ] && [ "$("$P/bin/numaplace" --version 2>&1 | grep -c "$version")" -ge 1 ] && ok ||
    bad "the installed $P/bin/numaplace does not run or report $version"
mod=$(find "$tmp/eb/modules" -path "*numaplace*" -name "$version*" 2>/dev/null | head -1)
# Lmod's module: root = P, PATH gets its bin
[ -n "$mod" ] && grep -q "$P" "$mod" && grep -q 'prepend_path("PATH", pathJoin(root, "bin"))' "$mod" && ok ||
    bad "no module file for numaplace/$version setting PATH to $P/bin: $(cat "$mod" 2>/dev/null | head -20)"
[ ! -e "$P/lib/libnumaplace_test_helpers.a" ] && [ -z "$(find "$tmp/build" -name 'test_*' -type f -perm -u+x 2>/dev/null | head -1)" ] && ok ||
    bad "the EasyBuild build made test programs (BUILD_TESTING=OFF expected)"
summary test_easybuild
