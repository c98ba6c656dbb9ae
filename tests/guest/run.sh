#!/bin/bash
# Boots one multi-node guest per shape (tools/numavm) and runs every guest test program
# (build/guest/*) inside it as `PROGRAM --nodes N --cpus-per-node K`; then one boot with
# automatic NUMA balancing on. Before them (whole runs only): the harness self-test and the .deb
# installed by dpkg in a clean guest (tests/install/test_deb.sh). numaplace is in every guest as a
# user installs it: `cmake --install` of $BUILD, as /usr/local. Exit status: number of failed
# boots/programs (0 = all passed).
# Under CI=true a guest that cannot boot is a failure, never a skip. The guest programs get CI and
# the expected skips (tests/expected-skips.txt, as /usr/local/bin/expected-skips.txt): under
# CI=true a skip that file does not list fails there too (tests/unit/skip.h).
# env: NPL_GUEST_SHAPES="N:K:MiB ..." to choose shapes; BUILD=build; NPL_GUEST_THP=madvise|never;
# NPL_GUEST_TIMEOUT=S limits each boot (numavm --timeout; default 600 s)
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
SHAPES=${NPL_GUEST_SHAPES:-"2:2:384 3:2:256 4:2:640 8:1:256"}
progs=("$BUILD"/guest/*)
if [ -n "${NPL_GUEST_PROGRAMS:-}" ]; then # a subset, by name
    progs=(); for p in $NPL_GUEST_PROGRAMS; do progs+=("$BUILD/guest/$p"); done
fi
[ -x "${progs[0]}" ] || { echo "run.sh: no guest programs in $BUILD/guest (build first)"; exit 1; }
adds=()
names=""
for p in "${progs[@]}"; do
    adds+=(--add "$p")
    names="$names $(basename "$p")"
done
adds+=(--add tests/guest/in_guest.sh --add tests/expected-skips.txt)
# what every guest command gets in its environment
guest_env=(env "CI=${CI:-}" NPL_EXPECTED_SKIPS=/usr/local/bin/expected-skips.txt)
# numaplace itself as a user installs it: `cmake --install` of $BUILD, once, into a staging prefix
# that every guest gets as /usr/local (numaplace run finds /usr/local/lib/numaplace/
# libnumaplace_preload.so, the one interposer, by itself)
stage=$(mktemp -d "${TMPDIR:-/tmp}/npl-stage.XXXXXX") || exit 1
trap 'rm -rf "$stage"' EXIT
if cmake --install "$BUILD" --prefix "$stage" >"$stage.log" 2>&1; then adds+=(--install-tree "$stage")
else echo "run.sh: cmake --install $BUILD failed:"; cat "$stage.log"; exit 1; fi
rm -f "$stage.log"
# guest_cli's and guest_regions' helper programs (build/progs: OpenMP probes built by gcc and
# clang); LLVM's OpenMP runtime where a test preloads it over a gcc build on purpose (--next-touch
# itself needs none)
for p in "$BUILD"/progs/*; do [ -x "$p" ] && adds+=(--add "$p"); done
libomp=$(ls /usr/lib/llvm-*/lib/libomp.so.5 2>/dev/null | head -1)
# an independent count of system calls for guest_arch
command -v strace >/dev/null 2>&1 && adds+=(--add "$(command -v strace)")
[ -n "$libomp" ] && adds+=(--add "$libomp")

# guest_bind_mpi (docs/MPI.md): Open MPI's launcher, plugins, help texts and config at
# the same paths in the guest (tools/numavm --add-tree copies a tree with its libraries); only in
# the 2- and 4-node shapes, where it runs (they make each boot ~15 s slower)
mpi_adds=()
if [[ " $names " == *" guest_bind_mpi "* ]] && command -v orterun >/dev/null 2>&1; then
    mpilib=$(dirname "$(readlink -f "$(ldd "$BUILD/guest/guest_bind_mpi" | awk '/libmpi\.so/ {print $3}')")")
    mpi_adds+=(--add "$(command -v orterun)")
    for d in "$mpilib"/openmpi/lib/openmpi3 "$mpilib"/pmix2/lib/pmix /usr/share/openmpi /etc/openmpi; do
        [ -d "$d" ] && mpi_adds+=(--add-tree "$d:$d")
    done
fi

if ! command -v qemu-system-x86_64 >/dev/null 2>&1 && [ "${CI:-}" != true ]; then
    sh scripts/deps.sh >/dev/null 2>&1 || true
fi
if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
    TESTS=$PWD/tests
    . tests/check.sh
    skip qemu "guest tests: qemu-system-x86_64 is not installed (run scripts/deps.sh)"
    summary "guest tests"; exit
fi

pass=0 fail=0
if [ -z "${NPL_GUEST_PROGRAMS:-}" ]; then
    echo "=== the harness itself (tests/guest/harness_test.sh)"
    if bash tests/guest/harness_test.sh; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
    echo "=== the .deb installed by dpkg in a clean guest (tests/install/test_deb.sh)"
    if BUILD=$BUILD bash tests/install/test_deb.sh; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
fi
# Programs whose checks need several nodes but not a particular count run in the 4-node guest
# only, in two boots of their own (each costs 25-130 s of TCG time, and one boot has one numavm
# timeout: together they took 406-498 s of its 600): the profile chain, its measured locality and
# real programs' allocators and memory limits in one; the OpenMP binding forms, the region hooks
# and signal chaining in the other. The whole list runs in every shape when NPL_GUEST_PROGRAMS
# names programs.
FOUR_ONLY_A=" guest_profile guest_profile_locality guest_run_progs "
FOUR_ONLY_B=" guest_ompbind guest_regions guest_signals "
boot() { # nodes, CPUs a node, MiB a node, label, programs...
    local n=$1 k=$2 mem=$3 label=$4; shift 4
    local big=$(( n * mem / 4 )); [ $big -gt 1024 ] && big=1024   # 1 GiB on the 4-node shape
    echo "=== guest: $n nodes x $k CPUs x $mem MiB$label"
    local start; start=$(date +%s)
    local shape_adds=(); [ "$n" = 2 ] || [ "$n" = 4 ] && shape_adds=(${mpi_adds[@]+"${mpi_adds[@]}"})
    tools/numavm --nodes "$n" --cpus-per-node "$k" --mem-per-node "$mem" ${NPL_GUEST_THP:+--thp "$NPL_GUEST_THP"} \
        ${NPL_GUEST_TIMEOUT:+--timeout "$NPL_GUEST_TIMEOUT"} "${adds[@]}" ${shape_adds[@]+"${shape_adds[@]}"} \
        -- "${guest_env[@]}" ${NPL_GUEST_ENV:-} in_guest.sh "--nodes $n --cpus-per-node $k --big-mib $big" "$@"
    local rc=$?
    echo "=== guest $n nodes$label: rc=$rc ($(( $(date +%s) - start )) s)"
    if [ $rc -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}
for shape in $SHAPES; do
    IFS=: read -r n k mem <<<"$shape"
    if [ -n "${NPL_GUEST_PROGRAMS:-}" ]; then
        boot "$n" "$k" "$mem" "" $names
        continue
    fi
    common=() four_a=() four_b=()
    for p in $names; do
        if [[ "$FOUR_ONLY_A" == *" $p "* ]]; then four_a+=("$p")
        elif [[ "$FOUR_ONLY_B" == *" $p "* ]]; then four_b+=("$p")
        else common+=("$p"); fi
    done
    boot "$n" "$k" "$mem" "" "${common[@]}"
    if [ "$n" = 4 ] && [ ${#four_a[@]} -gt 0 ]; then
        boot "$n" "$k" "$mem" " (4-node-only: profile, real programs)" "${four_a[@]}"
    fi
    if [ "$n" = 4 ] && [ ${#four_b[@]} -gt 0 ]; then
        boot "$n" "$k" "$mem" " (4-node-only: OpenMP binding, regions, signals)" "${four_b[@]}"
    fi
done
if [ -n "${NPL_GUEST_PROGRAMS:-}" ]; then
    echo "== guest boots: $pass passed, $fail failed, 0 skipped"; exit $fail
fi
echo "=== guest: 4 nodes, automatic NUMA balancing ON"
tools/numavm --nodes 4 --cpus-per-node 1 --mem-per-node 256 --balancing "${adds[@]}" \
    -- "${guest_env[@]}" guest_tests --nodes 4 --cpus-per-node 1 --balancing
rc=$?
if [ $rc -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
echo "== guest boots: $pass passed, $fail failed, 0 skipped"
exit $fail
