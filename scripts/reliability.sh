#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Reliability checks (part of scripts/test.sh, the whole test suite; see docs/RELIABILITY.md).
# Run from anywhere; works on a fresh Debian 12 (installs what it needs with apt).
#   1. ASan+UBSan build (build-asan/): the whole ctest suite (unit, host, CLI, fuzz corpora),
#      then guest_migrate, guest_nexttouch and guest_soak in one 4-node guest
#   2. TSan build (build-tsan/): the threaded tests (host, unit, fuzz corpora), then guest_placement,
#      guest_nexttouch and guest_soak in a 2-node guest (THP always, checked by numavm_selftest.sh)
#   3. valgrind memcheck on the CLI's fast subcommands and error paths (build-rel/numaplace)
#   4. libFuzzer (clang-14, ASan+UBSan; one target per CPU at a time) on every
#      tests/fuzz/fuzz_NAME.c (policy strings, CPU/node lists, the config file, sizes and
#      counts), seeded from tests/fuzz/corpus/NAME/,
#      NPL_FUZZ_SECONDS each: 5 s (CI: the corpora are replayed by ctest too), 60 s with NPL_FULL=1
# (The guest with a CPU-less and a memory-less node, with guest_soak, is tests/guest/harness_test.sh's.)
# env: NPL_REL_STEPS="asan tsan memcheck fuzz" (a subset), NPL_FUZZ_SECONDS, NPL_FULL=1
# Exit status: the number of failed steps (0 = all passed).
set -u
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
T0=$(date +%s)
FUZZ_S=${NPL_FUZZ_SECONDS:-$([ "${NPL_FULL:-}" = 1 ] && echo 60 || echo 5)}

# ---- packages (Debian 12) ----
need=""
for p in clang-14 libfuzzer-14-dev libclang-rt-14-dev llvm-14 valgrind cmake gcc pkg-config \
         libhwloc-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need="$need $p"
done
if [ -n "$need" ]; then
    echo "reliability: installing$need"
    apt-get install -y -qq --no-install-recommends $need >/dev/null 2>&1 ||
        { apt-get update -qq && apt-get install -y -qq --no-install-recommends $need >/dev/null; } ||
        echo "reliability: WARNING: could not install$need"
fi
command -v qemu-system-x86_64 >/dev/null 2>&1 || sh scripts/deps.sh >/dev/null 2>&1 || true
[ -x /usr/bin/llvm-symbolizer-14 ] && export ASAN_SYMBOLIZER_PATH=/usr/bin/llvm-symbolizer-14

JOBS=$(nproc)
fail=0 pass=0
summary=""
step() { # name, function
    local name=$1; shift
    echo
    echo "=== reliability: $name"
    local t0; t0=$(date +%s)
    if "$@"; then
        pass=$((pass + 1)); summary="$summary\n  ok      $(( $(date +%s) - t0 ))s\t$name"
        echo "=== $name: ok ($(( $(date +%s) - t0 )) s)"
    else
        fail=$((fail + 1)); summary="$summary\n  FAILED  $(( $(date +%s) - t0 ))s\t$name"
        echo "=== $name: FAILED ($(( $(date +%s) - t0 )) s)"
    fi
}
build() { # dir, sanitizers ("" = none), [extra cmake arguments]
    cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=Debug -DNPL_SANITIZE="$2" ${3:-} >/dev/null &&
        nice cmake --build "$1" -j"$JOBS" >"$1/build.log" 2>&1 ||
        { tail -30 "$1/build.log"; return 1; }
}
guest() { # build dir, shape N:K:MiB, "programs", "env"
    BUILD=$1 NPL_GUEST_SHAPES=$2 NPL_GUEST_PROGRAMS=$3 NPL_GUEST_ENV=$4 \
        NUMAPLACE_BIN=$1/numaplace bash tests/guest/run.sh
}

# no leak, no recovery; the next-touch tests install SIGSEGV handlers of their own
asan_env="ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allow_user_segv_handler=1:detect_stack_use_after_return=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
tsan_env="TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1"

asan() {
    build build-asan address,undefined || return 1
    local rc=0
    # (not install.easybuild: EasyBuild builds its own copy from the sources, which never sees the
    # sanitizer flags, so under ASan it repeats the normal build's test; 57 s)
    (cd build-asan && env $asan_env ctest --output-on-failure -j"$JOBS" -E '^install\.easybuild$') || rc=1
    # page migration and next-touch only move pages with several nodes: the guest too
    NPL_GUEST_SCALE=3 guest build-asan 4:2:512 "guest_migrate guest_nexttouch guest_soak" "$asan_env" || rc=1
    return $rc
}
tsan() {
    # without OpenMP: GCC's libgomp is not built with TSan, so its barriers are invisible to it and
    # every OpenMP reduction would be reported (false positives; no suppression file is used).
    # The OpenMP code paths run in the normal and ASan builds.
    # Programs that need OpenMP (guest_omp_sweep, benchmarks) do not link: make -k builds the rest,
    # and ctest / the guest below fail if anything they run is missing.
    cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DNPL_SANITIZE=thread \
        -DCMAKE_DISABLE_FIND_PACKAGE_OpenMP=ON -DCMAKE_C_FLAGS=-Wno-unknown-pragmas >/dev/null || return 1
    nice cmake --build build-tsan -j"$JOBS" -- -k >build-tsan/build.log 2>&1 ||
        echo "note: not built without OpenMP:" \
            $(grep -o 'No rule to make target\|\[[^]]*\.dir/build.make:[0-9]*: [^]]*\] Error' build-tsan/build.log |
              sed 's/.*: //; s/\] Error//' | sort -u)
    local rc=0
    # the threaded tests: placement workers, next-touch from 8 threads, the concurrency tests of
    # host.hostile, replicas, pthread pinning (the CLI test forks shells: not TSan's business;
    # unit.test_classify starts no thread: 72 s under TSan for nothing ASan does not run)
    (cd build-tsan && env $tsan_env ctest --output-on-failure -j"$JOBS" -R "host|unit|fuzz" \
        -E '^unit\.test_classify$') || rc=1
    # THP always (the guest kernel's default): TSan's allocator hands out 2 MiB-aligned blocks,
    # backed by huge pages before guest_placement places them page by page (the engine splits them)
    echo "=== guest (TSan): 2 nodes x 2 CPUs x 384 MiB, THP always"
    local t0; t0=$(date +%s)
    # (vCPUs taking turns in one host thread, as tests/guest/run.sh boots them: TSan orders the
    # accesses by their synchronisation, not by when they ran)
    NUMAVM_TCG_THREAD=single NUMAPLACE_BIN=build-tsan/numaplace tools/numavm --nodes 2 --cpus-per-node 2 --mem-per-node 384 \
        --thp always --timeout 900 --add build-tsan/guest/guest_placement --add build-tsan/guest/guest_soak \
        --add build-tsan/guest/guest_nexttouch --add tests/guest/in_guest.sh \
        --add tests/guest/numavm_selftest.sh --add tests/expected-skips.txt -- env $tsan_env "CI=${CI:-}" \
        NPL_EXPECTED_SKIPS=/usr/local/bin/expected-skips.txt \
        in_guest.sh "--nodes 2 --cpus-per-node 2 --big-mib 48" numavm_selftest.sh@--thp@always \
        guest_placement guest_nexttouch guest_soak || rc=1
    echo "=== guest (TSan): $(( $(date +%s) - t0 )) s of its 900 s timeout"
    return $rc
}
memcheck() {
    # Release: the build type users pick, compiled at -O3, whose warnings differ (-Werror)
    cmake -S . -B build-rel -DCMAKE_BUILD_TYPE=Release >/dev/null &&
        nice cmake --build build-rel -j"$JOBS" --target numaplace_cli >/dev/null || return 1
    local n=build-rel/numaplace rc=0 log=build-rel/valgrind.log
    sleep 60 & local victim=$!
    local cmds=(
        "--version" "help" "topo" "topo --json"
        "map --policy prime_mapp:5 --nodes 4 --pages 64" "map --policy skew_mapp --nodes 3 --pages 16"
        "demo --mib 8" "run --policy cyclic -- true" "run --policy bind_all --pin compact -- true"
        "where $victim" "where $victim --json"
        # error paths: each must fail cleanly (a status, a message), with no memory error or leak
        "map --policy cyclik --nodes 2 --pages 2" "map --policy weighted:0=0 --nodes 2 --pages 2"
        "map --policy bind_all:99 --nodes 2 --pages 2" "nosuchcommand" "topo --bogus"
        "run --policy nonsense -- true" "run -- /nonexistent/program" "where 999999999"
        "where notapid" "where" "map" "run")
    for args in "${cmds[@]}"; do
        # shellcheck disable=SC2086
        NUMAPLACE_POLICY= valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,possible \
            --errors-for-leak-kinds=definite,possible $n $args >/dev/null 2>$log
        local r=$?
        if [ $r -eq 99 ] || [ $r -ge 128 ]; then
            echo "valgrind: 'numaplace $args' exit $r:"; cat $log; rc=1
        else
            echo "  numaplace $args: exit $r, clean"
        fi
    done
    # a bad NUMAPLACE_POLICY in the environment
    NUMAPLACE_POLICY=bogus valgrind -q --error-exitcode=99 --leak-check=full $n demo --mib 1 \
        >/dev/null 2>$log
    local r=$?
    if [ $r -eq 99 ] || [ $r -ge 128 ]; then echo "valgrind: NUMAPLACE_POLICY=bogus demo:"; cat $log; rc=1
    else echo "  NUMAPLACE_POLICY=bogus numaplace demo: exit $r, clean"; fi
    kill $victim 2>/dev/null; wait $victim 2>/dev/null
    return $rc
}
fuzz() {
    mkdir -p build-fuzz/obj
    # the library as it is built (every src/*.c and src/*/*.c; not the OMPT tool, which needs
    # libomp), compiled once with clang-14 into an archive; each target links it. Compiles, and
    # then the targets, run JOBS at a time (one core each).
    local cflags=(-g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                  -fno-omit-frame-pointer -Iinclude -Ibuild-fuzz/include -Isrc -I.)
    local objs=() rc=0 f running=0
    rm -f build-fuzz/obj/*.o build-fuzz/libnpl_fuzz.a build-fuzz/*.rc build-fuzz/*.report
    cmake -DNPL_VERSION_OUT=build-fuzz/include -P cmake/NplVersion.cmake || return 1 # numaplace/version.h
    for f in src/*.c src/*/*.c; do
        [ -f "$f" ] || continue
        local o; o=build-fuzz/obj/$(echo "${f#src/}" | tr / _ | sed 's/\.c$//').o
        clang-14 "${cflags[@]}" $(pkg-config --cflags hwloc) -c "$f" -o "$o" & running=$((running + 1))
        objs+=("$o")
        if [ $running -ge "$JOBS" ]; then wait -n || rc=1; running=$((running - 1)); fi
    done
    while [ $running -gt 0 ]; do wait -n || rc=1; running=$((running - 1)); done
    [ $rc -eq 0 ] || return 1
    ar rcs build-fuzz/libnpl_fuzz.a "${objs[@]}" || return 1
    local names=()
    for f in tests/fuzz/fuzz_*.c; do
        local name; name=$(basename "$f" .c); names+=("$name")
        fuzz_one "$f" "$name" & running=$((running + 1))
        if [ $running -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
    done
    wait
    for name in "${names[@]}"; do # in order, each target's report and status
        cat "build-fuzz/$name.report"
        [ "$(cat "build-fuzz/$name.rc" 2>/dev/null)" = 0 ] || rc=1
    done
    return $rc
}
fuzz_one() { # source, name: one target built and run; its lines in build-fuzz/NAME.report
    local f=$1 name=$2 corpus=tests/fuzz/corpus/${2#fuzz_} r=0
    {
        echo "--- $name (corpus $corpus, $FUZZ_S s)"
        if clang-14 "${cflags[@]}" -fsanitize=fuzzer -o "build-fuzz/$name" "$f" build-fuzz/libnpl_fuzz.a \
            $(pkg-config --libs hwloc) -lpthread -lm; then
            rm -rf "build-fuzz/$name.corpus"; mkdir -p "build-fuzz/$name.corpus"
            [ -d "$corpus" ] && cp "$corpus"/* "build-fuzz/$name.corpus/" 2>/dev/null
            env $asan_env "build-fuzz/$name" -max_total_time="$FUZZ_S" -max_len=4096 \
                -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="build-fuzz/$name-" \
                "build-fuzz/$name.corpus" >"build-fuzz/$name.log" 2>&1
            r=$?
            grep -E "^stat::number_of_executed_units|^stat::new_units_added|^stat::peak_rss" "build-fuzz/$name.log"
            if [ $r -ne 0 ]; then
                tail -40 "build-fuzz/$name.log"
                echo "FUZZ CRASH in $name: copy the build-fuzz/$name-crash-* file into $corpus/ (it"
                echo "becomes part of the regression test fuzz.${name#fuzz_} of ctest), then fix the bug."
            fi
        else
            r=1
        fi
    } >"build-fuzz/$name.report" 2>&1
    echo $r >"build-fuzz/$name.rc"
}
for s in ${NPL_REL_STEPS:-asan tsan memcheck fuzz}; do
    case $s in
        asan) step "ASan+UBSan: ctest; guest_migrate, guest_nexttouch, guest_soak (4 nodes)" asan ;;
        tsan) step "TSan: threaded tests; guest_placement, guest_nexttouch, guest_soak (2 nodes)" tsan ;;
        memcheck) step "valgrind memcheck: CLI subcommands and error paths" memcheck ;;
        fuzz) step "libFuzzer: tests/fuzz/fuzz_*.c, $FUZZ_S s each" fuzz ;;
        *) echo "reliability: unknown step $s"; fail=$((fail + 1)) ;;
    esac
done
echo
echo "=== reliability summary ($(( $(date +%s) - T0 )) s):"
printf "%b\n" "$summary"
echo "== reliability steps: $pass passed, $fail failed, 0 skipped"
exit $fail
