#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# API documentation check: runs doxygen with ./Doxyfile on the public headers (include/) and
# fails on any warning (WARN_AS_ERROR = FAIL_ON_WARNINGS, plus an empty-log check): every public
# function, struct, member, enum, macro and typedef must be documented, in its Doxygen group
# (@defgroup npl_* in include/numaplace.h and include/numaplace/*.h).
#   scripts/docs_check.sh [OUTDIR]   HTML in OUTDIR/html (default build/doc/html)
# Part of scripts/test.sh (the CI test command).
set -eu
cd "$(dirname "$0")/.."
command -v doxygen >/dev/null 2>&1 || sh scripts/deps.sh # installs doxygen
NPL_DOC_DIR=${1:-build/doc}
mkdir -p "$NPL_DOC_DIR"
NPL_VERSION=$(sed -n 's/^project(numaplace VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
export NPL_DOC_DIR NPL_VERSION
log="$NPL_DOC_DIR/doxygen-warnings.log"
rc=0
doxygen Doxyfile >"$log" 2>&1 || rc=$?
if [ $rc -ne 0 ] || grep -qi 'warning\|error' "$log"; then
    cat "$log"
    echo "docs_check: FAILED: doxygen reported $(grep -ci 'warning\|error' "$log" || true) warning(s) (status $rc)"
    exit 1
fi
echo "docs_check: API documentation of include/ built without warnings: $NPL_DOC_DIR/html/index.html"
