#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# skip_test.sh NAME KEY REASON: a test that this configuration could not build (a compiler or a
# library is missing) reports one skip under its own name instead of vanishing: under CI=true
# that is a failure unless KEY is an expected skip (tests/CMakeLists.txt, npl_skipped_test).
TESTS=$(cd "$(dirname "$0")" && pwd)
. "$TESTS/check.sh"
skip "$2" "$3"
summary "$1"
