#!/bin/sh
# Configure and build into build/ (warnings are errors).
set -eu
cd "$(dirname "$0")/.."
sh scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPL_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)"
