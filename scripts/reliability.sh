#!/bin/bash
# Reliability checks (part of the README's test command; see docs/RELIABILITY.md):
#   1. ASan+UBSan build: unit, host and CLI tests; the migration and next-touch guest tests
#   2. TSan build: the threaded host tests
#   3. valgrind memcheck on the CLI's fast subcommands
#   4. libFuzzer on the policy-string parser (60 s), seeded from tests/fuzz/corpus/policy
# Exit status: number of failed steps.
set -u
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
need=""
for p in clang-14 libfuzzer-14-dev libclang-rt-14-dev valgrind; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need="$need $p"
done
if [ -n "$need" ]; then
    apt-get install -y -qq --no-install-recommends $need >/dev/null 2>&1 ||
        { apt-get update -qq && apt-get install -y -qq --no-install-recommends $need >/dev/null; }
fi
fail=0 pass=0
step() { # name, command...
    local name=$1; shift
    echo "=== reliability: $name"
    local t0=$(date +%s)
    if "$@"; then pass=$((pass + 1)); echo "=== $name: ok ($(( $(date +%s) - t0 )) s)"
    else fail=$((fail + 1)); echo "=== $name: FAILED ($(( $(date +%s) - t0 )) s)"; fi
}
build() { # dir, sanitizers, compiler
    cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=Debug -DNPL_SANITIZE="$2" -DCMAKE_C_COMPILER="${3:-gcc}" \
        >/dev/null && cmake --build "$1" -j"$(nproc)" >/dev/null
}
asan_env="ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allow_user_segv_handler=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"

asan() {
    build build-asan address,undefined || return 1
    (cd build-asan && env $asan_env ctest --output-on-failure -j2) || return 1
    # the syscall-heavy code only moves pages with several nodes: run it in the guest too
    BUILD=build-asan NPL_GUEST_SHAPES=4:2:512 NPL_GUEST_PROGRAMS="guest_migrate guest_nexttouch" \
        NPL_GUEST_ENV="$asan_env" bash tests/guest/run.sh
}
tsan() {
    build build-tsan thread || return 1
    (cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -R "host|unit")
}
memcheck() {
    local n=build/numaplace rc=0
    [ -x $n ] || return 1
    for args in "--version" "topo" "topo --json" "map --policy prime_mapp:5 --nodes 4 --pages 64" \
                "map --policy cyclik --nodes 2 --pages 2" "demo --mib 8" "run --policy cyclic -- true"; do
        valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
            $n $args >/dev/null 2>/tmp/npl_vg.$$
        r=$?
        if [ $r -eq 99 ]; then echo "valgrind: errors in 'numaplace $args':"; cat /tmp/npl_vg.$$; rc=1; fi
    done
    rm -f /tmp/npl_vg.$$
    return $rc
}
fuzz() {
    mkdir -p build-fuzz
    clang-14 -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -o build-fuzz/fuzz_policy \
        tests/fuzz/fuzz_policy.c src/util.c src/topology.c src/policy.c src/threads.c src/sys.c \
        src/place.c src/array.c src/query.c src/migrate.c src/nexttouch.c src/replicate.c \
        $(pkg-config --cflags --libs hwloc) -lpthread || return 1
    rm -rf build-fuzz/corpus && cp -r tests/fuzz/corpus/policy build-fuzz/corpus
    build-fuzz/fuzz_policy -max_total_time=${NPL_FUZZ_SECONDS:-60} -max_len=256 \
        -artifact_prefix=build-fuzz/ build-fuzz/corpus 2>&1 | tail -3
    [ "${PIPESTATUS[0]}" -eq 0 ]
}
step "ASan+UBSan: ctest and guest migration/next-touch" asan
step "TSan: threaded host tests" tsan
step "valgrind memcheck: CLI" memcheck
step "libFuzzer: policy parser" fuzz
echo "reliability: $pass passed, $fail failed"
exit $fail
