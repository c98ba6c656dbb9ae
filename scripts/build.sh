#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Configure and build into build/ (warnings are errors: a developer's and CI's build).
#   scripts/build.sh            everything: the product, the tests, the benchmarks, the examples
#   scripts/build.sh --product  the product only (libraries, command, interposer): what
#                               scripts/main.sh runs; BUILD_TESTING, NPL_BUILD_BENCH and
#                               NPL_BUILD_EXAMPLES off (the same flags: nothing is rebuilt when
#                               scripts/test.sh builds the rest afterwards)
set -eu
cd "$(dirname "$0")/.."
all=ON
case "${1:-}" in
    --product) all=OFF ;;
    "") ;;
    *) echo "usage: $0 [--product]" >&2; exit 2 ;;
esac
sh scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPL_WERROR=ON \
      -DBUILD_TESTING=$all -DNPL_BUILD_BENCH=$all -DNPL_BUILD_EXAMPLES=$all >/dev/null
cmake --build build -j"$(nproc)"
