#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Spack installs numaplace from packaging/spack (by hand: CI has no Spack; docs/INSTALL.md).
#   sh scripts/spack_check.sh SPACK_ROOT [SPEC]     (SPEC default numaplace@VERSION)
# Everything Spack writes goes to a temporary directory: its configuration (the machine's
# compiler, cmake, pkgconf, hwloc, doxygen and gmake found as externals, cJSON given by hand: it
# has no detection), its caches and the install tree. The source is a tarball of this tree (with
# uncommitted changes of tracked files). Needs clingo importable by Spack's python (pip install
# clingo: Spack's own bootstrap needs the network). Then the installed command and pkg-config
# file are checked. Exit 0 when every step passed.
set -u
SPACK_ROOT=${1:?usage: spack_check.sh SPACK_ROOT [SPEC]}
SRC=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^project(numaplace VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
spec=${2:-numaplace@$version}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/npl-spack.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
export SPACK_USER_CONFIG_PATH=$tmp/user SPACK_USER_CACHE_PATH=$tmp/cache
spack() { "$SPACK_ROOT/bin/spack" "$@"; }
fail() { echo "spack_check: $*" >&2; exit 1; }

ref=$(git -C "$SRC" stash create 2>/dev/null || true)
git -C "$SRC" archive --prefix="numaplace-$version/" "${ref:-HEAD}" | gzip -n >"$tmp/numaplace-$version.tar.gz" ||
    fail "git archive of $SRC"
mkdir -p "$tmp/user"
cat >"$tmp/user/config.yaml" <<YAML
config:
  install_tree: {root: $tmp/opt}
  build_stage: [$tmp/stage]
  source_cache: $tmp/sources
  misc_cache: $tmp/cache/misc
YAML
cat >"$tmp/user/packages.yaml" <<YAML
packages:
  cjson: {externals: [{spec: cjson@1.7.15, prefix: /usr}], buildable: false}
YAML
spack compiler find >/dev/null || fail "spack compiler find"
spack repo add "$SRC/packaging/spack" >/dev/null || fail "spack repo add"
spack external find --not-buildable cmake pkgconf hwloc doxygen gmake >/dev/null ||
    fail "spack external find"
start=$(date +%s)
NUMAPLACE_TARBALL=$tmp/numaplace-$version.tar.gz spack install --no-checksum "$spec" >"$tmp/install.log" 2>&1 ||
    { tail -30 "$tmp/install.log" >&2; fail "spack install $spec"; }
echo "spack_check: spack install $spec: $(($(date +%s) - start)) s"
prefix=$(spack location -i "$spec") || fail "spack location -i $spec"
"$prefix/bin/numaplace" --version | grep -q "$version" || fail "$prefix/bin/numaplace --version"
"$prefix/bin/numaplace" topo >/dev/null || fail "$prefix/bin/numaplace topo"
PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion numaplace | grep -qx "$version" ||
    fail "pkg-config numaplace in $prefix"
echo "spack_check: $spec installed by Spack $(spack --version) in $prefix: numaplace --version, topo and pkg-config passed"
