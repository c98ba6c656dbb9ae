#!/bin/sh
# numaplace run on programs written the way users write them (tests/progs/*_styles*, spawner):
# every way to allocate (C, C++, Fortran), pthreads, std::thread, OpenMP under libgomp and libomp,
# nested regions, exits from threads, signals, clearenv, closed descriptors, self-set affinity,
# children started by a shell, system, popen, posix_spawn, vfork, fork and exec, static binaries.
# Exact checks: the output's checksum and the exit status (128+N for signal N) equal a run
# without numaplace; children of a --pin run get the process's CPUs (an OpenMP child defaults
# to one thread per CPU, as without numaplace). One node here: tests/guest/guest_cli.c checks
# placement page by page on several.
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
P=$(dirname "$N")/progs
SRC=$(dirname "$0")/../..
PRE=$(dirname "$N")/libnumaplace_preload.so
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
if [ ! -f "$PRE" ]; then
    skip_no_interposer "every case (programs under numaplace run)" "$PRE"; summary test_run_progs; exit
fi
[ -x "$P/alloc_styles" ] || { bad "$P/alloc_styles is not built"; summary test_run_progs; exit; }
T=$(mktemp -d /tmp/npl_test_run_progs.XXXXXX)
trap 'rm -rf "$T"' EXIT
# same OPTIONS PROG ARGS: status and stdout under run OPTIONS equal those of PROG alone
same() {
    opts=$1
    shift
    "$@" >$T/ref 2>/dev/null
    r1=$?
    $N run $opts -- "$@" >$T/got 2>$T/err
    r2=$?
    check "run $opts -- $(basename "$1") ${2:-}: status, output" "$r1 $(cksum <$T/ref)" "$r2 $(cksum <$T/got)"
}
OPTS="--policy=cyclic|--threshold=64K|--policy=skew_mapp|--pin=scatter|--threshold=64K
--policy=cyclic_block:2|--huge=thp|--first=3|--pin=compact
--next-touch|--policy=random_block|--threshold=256K
--nodes=0|--pin=compact|--verbose"
for prog in alloc_styles cxx_styles omp_styles_gcc omp_styles_clang fortran_omp; do
    if [ ! -x "$P/$prog" ]; then # cxx_styles: g++; omp_styles_clang: clang-14; fortran_omp: gfortran
        skip "prog-$prog" "$prog under numaplace run: $P/$prog is not built (scripts/deps.sh)"; continue
    fi
    echo "$OPTS" | while read -r o; do
        same "$(echo "$o" | tr '|=' '  ')" "$P/$prog"
        echo "$pass $fail" >$T/counts
    done
    read -r pass fail <$T/counts
done
for prog in omp_styles_gcc omp_styles_clang; do # a missing program would "pass" (127 both ways)
    [ -x "$P/$prog" ] || { skip "prog-$prog" "$prog --pin scatter: $P/$prog is not built"; continue; }
    t=5; [ $prog = omp_styles_clang ] && t=1
    OMP_NUM_THREADS=$t same "--pin scatter --policy cyclic" "$P/$prog"
done
# large allocations of every style are placed (8 at least at a 64K threshold)
$N run -v --policy cyclic --threshold 64K -- "$P/alloc_styles" >/dev/null 2>$T/err
check "alloc_styles: its large allocations are placed" 1 "$(grep -c 'placed under cyclic' $T/err | awk '{print ($1 >= 8)}')"
# how programs end: exit from a thread, abort, signals, pthread_exit in main, _exit, env changes
for m in none thread abort segv term mainexit quick clearenv unsetenv affinity; do
    same "--policy cyclic --pin compact --threshold 64K" "$P/exit_styles" $m
done
# a program that closes every fd and reopens: fd 2 is its own file, which gets no line of ours
$N run -v --policy cyclic --threshold 64K -- "$P/exit_styles" closefds $T/own 2>/dev/null
check "closefds: the program's file holds only its own line" "only this line" "$(cat $T/own)"
$N run -v --policy cyclic --threshold 64K -- "$P/exit_styles" none 2>&- >/dev/null
check "started with fd 2 closed: status 0" 0 $?
# a block larger than the memory available is not placed (placing populates every page): a
# program that reserves much and touches little must not be killed for memory. A fake meminfo
# (NUMAPLACE_FSROOT, as the library reads /proc) says 100 MiB are available.
mkdir -p $T/root/proc
ln -s /sys $T/root/sys
ln -s /proc/self $T/root/proc/self
printf 'MemTotal: 1000000 kB\nMemFree: 100000 kB\nMemAvailable: 100000 kB\n' >$T/root/proc/meminfo
NUMAPLACE_FSROOT=$T/root $N run -v --policy skew_mapp -- "$P/exit_styles" reserve 200 >$T/out 2>$T/err
check "reserve 200 MiB with 100 MiB available: status, output" "0 reserved 1" "$? $(tail -1 $T/out)"
check "reserve 200 MiB with 100 MiB available: not placed, and said" 1 "$(grep -c '209715200 bytes not placed (larger than the memory available' $T/err)"
NUMAPLACE_FSROOT=$T/root $N run -v --policy skew_mapp -- "$P/exit_styles" reserve 80 >/dev/null 2>$T/err
check "reserve 80 MiB with 100 MiB available: placed" 1 "$(grep -c '83886080 bytes: placed under skew_mapp' $T/err)"
# --pin: children (shell, system, popen, spawn, vfork, fork+exec, exec) start on every CPU of the
# process, not on the CPU of the pinned thread that made them
want=0; [ -x "$P/omp_probe_gcc" ] && want=$("$P/omp_probe_gcc" | wc -l)
if [ ! -x "$P/omp_probe_gcc" ]; then
    skip prog-omp_probe_gcc "the --pin children cases: $P/omp_probe_gcc is not built (no OpenMP)"
elif [ "$want" -lt 2 ]; then
    skip one-cpu "the --pin children cases: one CPU, a child narrowed to its parent's CPU cannot be told apart"
else
    check "--pin: a shell's OpenMP child has $want threads" "$want" "$($N run --pin compact -- sh -c "$P/omp_probe_gcc" | wc -l)"
    for m in system popen spawn spawnp vfork fork execl execlp execle execv execvp execve; do
        check "--pin: an OpenMP child by $m has $want threads" "$want" "$($N run --pin scatter -- "$P/spawner" $m "$P/omp_probe_gcc" | wc -l)"
    done
    check "--pin: the shell itself is pinned (thread 0)" 1 "$($N run --pin compact -- sh -c 'grep Cpus_allowed_list /proc/$$/status' | awk '{print ($2 ~ /^[0-9]+$/)}')"
fi
[ "$want" -gt 0 ] &&
    check "--pin: OpenMP children by 5 spawn modes in one process" "$((5 * want))" "$($N run --pin scatter -- "$P/spawner" system,popen,spawn,vfork,fork "$P/omp_probe_gcc" | wc -l)"
if [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; then # a static shell's children
    $N run -v --policy cyclic --threshold 64K -- /bin/busybox sh -c "$P/exit_styles none" >/dev/null 2>$T/err
    check "static shell: its dynamic child's allocation is placed" 1 "$(grep -c 'placed under cyclic' $T/err | awk '{print ($1 > 0)}')"
    check "static shell: the note says its children get the interposer" 1 "$(grep -c 'its dynamically linked children get it' $T/err)"
else
    skip busybox-static "the static-shell cases: no static /bin/busybox (scripts/deps.sh)"
fi
for m in execl execle execv execve spawn; do # the environment goes with the child
    check "--pin: a child by $m gets the environment" "compact" "$($N run --pin compact -- "$P/spawner" $m /bin/sh -c 'echo ${NUMAPLACE_PIN:-none}')"
done
for m in system spawn vfork fork execv; do
    $N run --pin compact -- "$P/spawner" $m /bin/sh -c 'exit 5'; check "--pin: $m child's status 5" 5 $?
    $N run --pin compact -- "$P/spawner" $m /bin/sh -c 'kill -TERM $$'; check "--pin: $m child's SIGTERM: 143" 143 $?
done
# a static binary: the interposer cannot reach it; run applies the kernel policy and says so
if ${CC:-cc} -static -O1 -o $T/exit_static "$SRC/tests/progs/exit_styles.c" -lpthread 2>/dev/null; then
    same "--policy cyclic" $T/exit_static none
    check "static + cyclic: the note names the kernel policy" 1 "$(grep -c 'cyclic applies as the process-wide kernel policy' $T/err)"
    check "static + cyclic: its memory is interleaved" "interleaved 1" "$($N run --policy cyclic -- $T/exit_static interleaved 2>/dev/null | tail -1)"
    same "--pin compact" $T/exit_static abort
    check "static + --pin: the note says OpenMP threads only" 1 "$(grep -c 'only its OpenMP threads' $T/err)"
    same "--nodes 0" $T/exit_static segv
else
    skip static-libc "the static-binary cases: no static C library (libc6-dev)"
fi
summary test_run_progs
