#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Boots multi-node guests of each shape (tools/numavm) and runs every guest test program
# (build/guest/*) inside them as `PROGRAM --nodes N --cpus-per-node K`; one boot with automatic
# NUMA balancing on; and (whole runs only) the harness self-test and the .deb installed by dpkg in
# a clean guest (tests/install/test_deb.sh). The boots run side by side, one per host core
# (below). numaplace is in every guest as a user installs it: `cmake --install` of $BUILD, as
# /usr/local. Exit status: number of failed boots/programs (0 = all passed).
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
adds+=(--add tests/guest/in_guest.sh --add tests/guest/numavm_selftest.sh --add tests/expected-skips.txt)
# what every guest command gets in its environment. OpenMP's idle threads sleep: a guest's 8
# vCPUs take turns on the host under TCG, where libgomp's default spin (300,000 rounds before
# it waits on a futex) took a fifth of the OpenMP programs' time (guest_signals 80 -> 58 s,
# guest_regions 69 -> 49 s, a thread per vCPU) and changes no placement or count they check
guest_env=(env "CI=${CI:-}" "NPL_FULL=${NPL_FULL:-}" NPL_EXPECTED_SKIPS=/usr/local/bin/expected-skips.txt
           "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}")
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

# Boots run side by side on JOBS host cores (NPL_GUEST_JOBS, default nproc). A guest's vCPUs take
# turns in one host thread (TCG thread=single, tools/numavm's NUMAVM_TCG_THREAD) and use one core:
# with a host thread per vCPU, 8 vCPUs on 2 host cores made every cross-CPU call (the TLB
# shootdown of each sampled fault) wait for its target's thread to be scheduled (the first 4-node
# boot 647 s on two cores, 415 s on one). The programs in CONCURRENT run `numaplace profile` and
# check its advice, which needs a profile's threads to run at once: where they take turns, their
# samples weigh their turns (guest_advice's case e was once advised cyclic; phase-changing arrays
# of guest_contract and guest_profile_locality irregular, in 1 of 6 profiles and in 1 of 4 runs).
# They boot with a host thread per vCPU, alone, before the others. Each boot's output comes whole
# when it ends; the report lists them in the order they started.
JOBS=${NPL_GUEST_JOBS:-$(nproc)}
CONCURRENT=" guest_advice guest_contract guest_profile guest_profile_locality guest_profile_nodes guest_replicate "
jobdir=$(mktemp -d "${TMPDIR:-/tmp}/npl-guestjobs.XXXXXX") || exit 1
trap 'rm -rf "$stage" "$jobdir"' EXIT
njobs=0 used=0 JOB_ID=0
declare -A job_cores=() job_log=()
reap() { # waits for one job, prints its output whole, frees its cores
    local pid=""
    wait -n -p pid
    [ -n "$pid" ] || return 0
    cat "${job_log[$pid]}"
    used=$((used - job_cores[$pid]))
    unset "job_cores[$pid]" "job_log[$pid]"
}
launch() { # cores, command...: COMMAND in the background once CORES are free; its output, status
           # and (boot's) line of the report in $jobdir/N.{log,rc,report}
    local want=$1; shift
    [ "$want" -le "$JOBS" ] || want=$JOBS
    while [ ${#job_cores[@]} -gt 0 ] && [ $((used + want)) -gt "$JOBS" ]; do reap; done
    njobs=$((njobs + 1)) JOB_ID=$njobs
    { "$@"; echo $? >"$jobdir/$JOB_ID.rc"; } >"$jobdir/$JOB_ID.log" 2>&1 </dev/null &
    job_cores[$!]=$want; job_log[$!]=$jobdir/$JOB_ID.log; used=$((used + want))
}
T0=$(date +%s)
export NUMAVM_TCG_THREAD=${NUMAVM_TCG_THREAD:-single} # the harness's and the .deb's boots too

# Which programs run in which shape (CI, the default). Every program runs in the 4-node guest.
# (except ELSEWHERE's). The other shapes run only the programs whose checks the shape changes: the policy maps and
# pinning over 2, 3 and 8 nodes (guest_placement, guest_probe), MAi's maps (3 and 8), the
# restricted-topology cases (guest_arch: 2 and 3), report's factor matrix over an odd node count
# (guest_cli --measure-report, 3), Open MPI's ranks over 2 nodes, and the harness's own shape
# check (numavm_selftest.sh) where a shape is booted anyway. Programs that need "several nodes"
# and nothing more (soak, next-touch, migration, hostile, THP, profile, ...) run once.
# NPL_FULL=1: every program in every shape (an hour and more on 2 cores).
SHAPE_2=" numavm_selftest.sh guest_placement guest_probe guest_arch guest_bind_mpi "
SHAPE_3=" guest_placement guest_probe guest_arch guest_mai guest_cli@--measure-report "
SHAPE_8=" numavm_selftest.sh guest_placement guest_probe guest_mai "
# run in a boot of another shape, not again in the 4-node one: guest_soak in
# tests/guest/harness_test.sh's CPU-less and memory-less guest (and the ASan and TSan guests of
# scripts/reliability.sh); guest_cli in the 3-node guest (N > 2: the same branches as 4 nodes)
ELSEWHERE=" guest_soak guest_cli "
# Seconds each program took in the 4-node guest (in_guest.sh's "--- PROGRAM: exit R, S s" lines,
# rounded up), measured on the 2-core dev machine: the profile chain's programs, guest_ompbind,
# guest_run_progs, guest_signals, guest_regions and guest_cli's --measure-report in a clean-clone
# run of the test command (with a guest of another session beside it: upper figures), the
# others earlier at load 10-12; guest_advice at 8 passes alone (283 s).
# A boot's timeout is FACTOR x (BOOT_S + the sum of its programs), at least 600 s (numavm's
# default), so a boot that takes what was measured uses at most 1/FACTOR of its timeout; the
# 4-node programs are packed into boots of at most PACK_S measured seconds. A program not in the
# table counts DEFAULT_S. NPL_GUEST_SCALE multiplies the figures (the sanitizer builds:
# scripts/reliability.sh); NPL_GUEST_TIMEOUT overrides the whole timeout.
declare -A SECONDS_OF=(
    [numavm_selftest.sh]=2 [guest_arch]=21 [guest_bind_cpp]=2 [guest_bind_f]=4
    [guest_bind_mpi]=60 [guest_cli]=99 [guest_cli@--measure-report]=84 [guest_hostile]=53
    [guest_khugepaged]=5 [guest_mai]=1 [guest_migrate]=10 [guest_nexttouch]=58
    [guest_omp_sweep]=43 [guest_probe]=12 [guest_replicate]=20 [guest_soak]=87 [guest_placement]=50
    [guest_thp]=2 [guest_omp_alloc]=12 [guest_contract]=25 [mai_jacobi]=4 [mai_policy_test]=1 [mai_stream]=2
    [guest_profile]=80 [guest_profile_locality]=60 [guest_run_progs]=40
    [guest_ompbind]=71 [guest_regions]=57 [guest_signals]=95 [guest_advice]=283
)
FACTOR=2 BOOT_S=50 DEFAULT_S=60 PACK_S=450
est() { # programs...: their measured seconds, scaled
    local sum=0 p
    for p in "$@"; do sum=$((sum + ${SECONDS_OF[$p]:-$DEFAULT_S})); done
    echo $(( sum * ${NPL_GUEST_SCALE:-1} ))
}
report_line() { # seconds, timeout, what: this job's line of the report
    printf '%4d s of %4d s (%3d%%)  %s\n' "$1" "$2" $((100 * $1 / $2)) "$3" >"$jobdir/$JOB_ID.report"
}
boot() { # nodes, CPUs a node, MiB a node, TCG mode (single|multi), programs...
    local n=$1 k=$2 mem=$3 tcg=$4; shift 4
    local label=""; [ "$tcg" = multi ] && label=", a host thread per vCPU"
    local big=$(( n * mem / 4 )); [ $big -gt 1024 ] && big=1024   # 1 GiB on the 4-node shape
    local timeout=$(( FACTOR * (BOOT_S + $(est "$@")) )); [ $timeout -ge 600 ] || timeout=600
    timeout=${NPL_GUEST_TIMEOUT:-$timeout}
    echo "=== guest: $n nodes x $k CPUs x $mem MiB$label (timeout $timeout s: $*)"
    local start; start=$(date +%s)
    local shape_adds=(); [[ " $* " == *" guest_bind_mpi "* ]] && shape_adds=(${mpi_adds[@]+"${mpi_adds[@]}"})
    NUMAVM_TCG_THREAD=$tcg tools/numavm --nodes "$n" --cpus-per-node "$k" --mem-per-node "$mem" \
        ${NPL_GUEST_THP:+--thp "$NPL_GUEST_THP"} --timeout "$timeout" "${adds[@]}" ${shape_adds[@]+"${shape_adds[@]}"} \
        -- "${guest_env[@]}" ${NPL_GUEST_ENV:-} in_guest.sh "--nodes $n --cpus-per-node $k --big-mib $big" "$@"
    local rc=$?
    local took=$(( $(date +%s) - start ))
    echo "=== guest $n nodes$label: rc=$rc ($took s of its $timeout s timeout)"
    report_line "$took" "$timeout" "$n nodes x $k CPUs$label"
    return $rc
}
boots() { # nodes, CPUs a node, MiB a node, programs...: planned (the file $jobdir/plan) as a boot of
          # CONCURRENT's programs with a host thread per vCPU, and the others' boots of at most
          # PACK_S measured seconds each. A plan line: "CORES SECONDS COMMAND ARGS..."
    local n=$1 k=$2 mem=$3; shift 3
    local group=() together=() p
    for p in "$@"; do
        if [[ "$CONCURRENT" == *" ${p%%@*} "* ]]; then together+=("$p"); continue; fi
        if [ ${#group[@]} -gt 0 ] && [ $(( $(est "${group[@]}") + $(est "$p") )) -gt $PACK_S ]; then
            echo "1 $(est "${group[@]}") boot $n $k $mem single ${group[*]}" >>"$jobdir/plan"; group=()
        fi
        group+=("$p")
    done
    [ ${#together[@]} -eq 0 ] ||
        echo "$((n * k)) $(est "${together[@]}") boot $n $k $mem multi ${together[*]}" >>"$jobdir/plan"
    [ ${#group[@]} -eq 0 ] || echo "1 $(est "${group[@]}") boot $n $k $mem single ${group[*]}" >>"$jobdir/plan"
}
harness() { echo "=== the harness itself (tests/guest/harness_test.sh)"; bash tests/guest/harness_test.sh; }
deb() {
    echo "=== the .deb installed by dpkg in a clean guest (tests/install/test_deb.sh)"
    BUILD=$BUILD bash tests/install/test_deb.sh
}
balancing_boot() { # NUMA balancing on, and numavm's balancing and huge-page options checked
    local start timeout=${NPL_GUEST_TIMEOUT:-600}
    echo "=== guest: 4 nodes, automatic NUMA balancing ON, 4 huge pages a node"
    start=$(date +%s)
    tools/numavm --nodes 4 --cpus-per-node 1 --mem-per-node 256 --balancing --hugepages 4 \
        --timeout "$timeout" "${adds[@]}" -- "${guest_env[@]}" in_guest.sh "--nodes 4 --cpus-per-node 1" \
        numavm_selftest.sh@--balancing@1@--hugepages@4 guest_placement@--balancing
    local rc=$? took=$(( $(date +%s) - start ))
    report_line "$took" "$timeout" "4 nodes x 1 CPU, balancing on"
    return $rc
}
for shape in $SHAPES; do
    IFS=: read -r n k mem <<<"$shape"
    if [ -n "${NPL_GUEST_PROGRAMS:-}" ]; then
        boots "$n" "$k" "$mem" $names
        continue
    fi
    want=()
    case "$n:${NPL_FULL:-}" in
        4:1) want=(numavm_selftest.sh $names) ;;
        4:) want=(numavm_selftest.sh); for p in $names; do [[ "$ELSEWHERE" == *" $p "* ]] || want+=("$p"); done ;;
        *:1) want=(numavm_selftest.sh $names); [ "$n" = 3 ] && want=("${want[@]/#guest_cli/guest_cli@--measure-report}") ;;
        2:) want=($SHAPE_2) ;;
        3:) want=($SHAPE_3) ;;
        8:) want=($SHAPE_8) ;;
        *) want=(numavm_selftest.sh guest_placement guest_probe) ;;
    esac
    run=()
    for p in "${want[@]}"; do # the programs that were built (guest_bind_mpi needs MPI)
        [[ "$p" == numavm_selftest.sh || " $names " == *" ${p%%@*} "* ]] && run+=("$p")
    done
    boots "$n" "$k" "$mem" "${run[@]}"
done
# the harness, the .deb and the balancing boot (whole runs only): seconds measured as for SECONDS_OF
[ -n "${NPL_GUEST_PROGRAMS:-}" ] || printf '1 60 harness\n1 50 deb\n1 28 balancing_boot\n' >>"$jobdir/plan"
# the boots with a host thread per vCPU first (alone), then the longest first
sort -k1,1nr -k2,2nr "$jobdir/plan" >"$jobdir/order"
while read -r cores _ cmd; do
    # shellcheck disable=SC2086
    launch "$cores" $cmd
done <"$jobdir/order"
while [ ${#job_cores[@]} -gt 0 ]; do reap; done
pass=0 fail=0 report=""
for ((i = 1; i <= njobs; i++)); do
    if [ "$(cat "$jobdir/$i.rc" 2>/dev/null)" = 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
    [ -f "$jobdir/$i.report" ] && report="$report\n  $(cat "$jobdir/$i.report")"
done
echo "== guest boots, each against its timeout (no boot should pass 50%: add its programs' measured"
echo "   seconds to SECONDS_OF in tests/guest/run.sh), $JOBS at a time:"
printf "%b\n" "$report"
echo "== guest tests took $(( $(date +%s) - T0 )) s"
echo "== guest boots: $pass passed, $fail failed, 0 skipped"
exit $fail
