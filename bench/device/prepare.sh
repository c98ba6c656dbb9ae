#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# bench/device/prepare.sh SRC [DIR] - assembles DIR (default .dev) for bench/device/run.sh on a
# machine without build tools: a Release build of numaplace, cg_plain, mg_plain, the many-region program
# (omp_styles, gcc and clang builds), upstream STREAM and XSBench built from SRC (the unpacked
# upstream trees, as bench/real/run_real; those missing from SRC, or all with SRC "-", are left
# out and run.sh skips their parts),
# and the shared libraries they need (the target may lack them). Copy DIR there and run DIR/run.sh.
set -eu
SRC=$1 D=${2:-.dev}
cd "$(dirname "$0")/../.."
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-dev -j"$(nproc)" >/dev/null
rm -rf "$D" && mkdir -p "$D/bin" "$D/lib"
cp build-dev/numaplace build-dev/libnumaplace.so* build-dev/libnumaplace_preload.so build-dev/bench/progs/cg_plain build-dev/bench/progs/mg_plain "$D/bin/"
cp build-dev/progs/omp_styles_gcc build-dev/progs/omp_styles_clang "$D/bin/"
cp bench/profile_overhead.sh bench/device/run.sh "$D/"
if [ -f "$SRC/STREAM/stream.c" ]; then
    gcc -O3 -fopenmp -DSTREAM_ARRAY_SIZE=80000000 -DNTIMES=20 "$SRC/STREAM/stream.c" -o "$D/bin/stream"
fi
if [ -d "$SRC/XSBench/openmp-threading" ]; then
    gcc -std=gnu99 -O3 -fopenmp "$SRC"/XSBench/openmp-threading/*.c -o "$D/bin/XSBench" -lm
fi
for l in libhwloc.so.15 libcjson.so.1 libudev.so.1 libgomp.so.1; do
    cp -L "/lib/$(gcc -print-multiarch)/$l" "$D/lib/"
done
cp -L "$(ldd build-dev/progs/omp_styles_clang | awk '/libomp/{print $3}')" "$D/lib/" # clang's libomp
echo "prepared $D ($(du -sh "$D" | cut -f1))"
