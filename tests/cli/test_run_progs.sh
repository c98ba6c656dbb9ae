#!/bin/sh
# numaplace run on programs written the way users write them (tests/progs/*_styles*, spawner):
# every way to allocate (C, C++, Fortran), pthreads, std::thread, OpenMP under libgomp and libomp,
# nested regions, exits from threads, signals, clearenv, closed descriptors, self-set affinity,
# children started by a shell, system, popen, posix_spawn, vfork, fork and exec, static binaries,
# an OpenMP library dlopen'ed with RTLD_LOCAL by a program without OpenMP.
# Exact checks: the output's checksum and the exit status (128+N for signal N) equal a run
# without numaplace; children of a --pin run get the process's CPUs (an OpenMP child defaults
# to one thread per CPU, as without numaplace). One node here: tests/guest/guest_cli.c checks
# placement page by page on several.
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
P=$(dirname "$N")/progs
SRC=$(dirname "$0")/../..
PRE=$(dirname "$N")/libnumaplace_preload.so
if [ ! -f "$PRE" ] || [ ! -x "$P/alloc_styles" ]; then
    echo "SKIP: $PRE or $P/alloc_styles missing (sanitizer builds have no preload)"
    exit 0
fi
T=$(mktemp -d /tmp/npl_test_run_progs.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
check() { # name, expected, actual
    if [ "$2" = "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1: got [$3] want [$2]"; fi
}
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
    [ -x "$P/$prog" ] || { echo "SKIP: $P/$prog not built"; continue; }
    echo "$OPTS" | while read -r o; do
        same "$(echo "$o" | tr '|=' '  ')" "$P/$prog"
        echo "$pass $fail" >$T/counts
    done
    read -r pass fail <$T/counts
done
OMP_NUM_THREADS=5 same "--pin scatter --policy cyclic" "$P/omp_styles_gcc"
OMP_NUM_THREADS=1 same "--pin scatter --policy cyclic" "$P/omp_styles_clang"
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
want=$("$P/omp_probe_gcc" | wc -l)
if [ "$want" -lt 2 ]; then
    echo "SKIP: one CPU: a child narrowed to its parent's CPU cannot be told apart"
else
    check "--pin: a shell's OpenMP child has $want threads" "$want" "$($N run --pin compact -- sh -c "$P/omp_probe_gcc" | wc -l)"
    for m in system popen spawn spawnp vfork fork execl execlp execle execv execvp execve; do
        check "--pin: an OpenMP child by $m has $want threads" "$want" "$($N run --pin scatter -- "$P/spawner" $m "$P/omp_probe_gcc" | wc -l)"
    done
    check "--pin: the shell itself is pinned (thread 0)" 1 "$($N run --pin compact -- sh -c 'grep Cpus_allowed_list /proc/$$/status' | awk '{print ($2 ~ /^[0-9]+$/)}')"
fi
check "--pin: OpenMP children by 5 spawn modes in one process" "$((5 * want))" "$($N run --pin scatter -- "$P/spawner" system,popen,spawn,vfork,fork "$P/omp_probe_gcc" | wc -l)"
if [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; then # a static shell's children
    $N run -v --policy cyclic --threshold 64K -- /bin/busybox sh -c "$P/exit_styles none" >/dev/null 2>$T/err
    check "static shell: its dynamic child's allocation is placed" 1 "$(grep -c 'placed under cyclic' $T/err | awk '{print ($1 > 0)}')"
    check "static shell: the note says its children get the interposer" 1 "$(grep -c 'its dynamically linked children get it' $T/err)"
else
    echo "SKIP: no static busybox: the static-shell cases"
fi
for m in execl execle execv execve spawn; do # the environment goes with the child
    check "--pin: a child by $m gets the environment" "compact" "$($N run --pin compact -- "$P/spawner" $m /bin/sh -c 'echo ${NUMAPLACE_PIN:-none}')"
done
for m in system spawn vfork fork execv; do
    $N run --pin compact -- "$P/spawner" $m /bin/sh -c 'exit 5'; check "--pin: $m child's status 5" 5 $?
    $N run --pin compact -- "$P/spawner" $m /bin/sh -c 'kill -TERM $$'; check "--pin: $m child's SIGTERM: 143" 143 $?
done
# an OpenMP library dlopen'ed with RTLD_LOCAL by a program without OpenMP: the interposer's
# GOMP_parallel* find libgomp outside the global scope (no abort), in every mode
if ${CC:-cc} -DPLUGIN -fopenmp -shared -fPIC -O1 -o $T/omp_plugin.so "$SRC/tests/progs/omp_plugin.c" 2>/dev/null &&
   ${CC:-cc} -O1 -o $T/dl_host "$SRC/tests/progs/omp_plugin.c" -ldl 2>/dev/null; then
    for o in "--next-touch" "--policy cyclic" "--pin compact" "--next-touch --policy cyclic"; do
        same "$o" $T/dl_host $T/omp_plugin.so
    done
    check "dlopen'ed OpenMP library: it ran" 1 "$(grep -c '^sum ' $T/got)"
else
    echo "SKIP: cannot build an OpenMP library with ${CC:-cc} -fopenmp"
fi
# a static binary: the interposer cannot reach it; run applies the kernel policy and says so
if ${CC:-cc} -static -O1 -o $T/exit_static "$SRC/tests/progs/exit_styles.c" -lpthread 2>/dev/null; then
    same "--policy cyclic" $T/exit_static none
    check "static + cyclic: the note names the kernel policy" 1 "$(grep -c 'cyclic applies as the process-wide kernel policy' $T/err)"
    check "static + cyclic: its memory is interleaved" "interleaved 1" "$($N run --policy cyclic -- $T/exit_static interleaved 2>/dev/null | tail -1)"
    same "--pin compact" $T/exit_static abort
    check "static + --pin: the note says OpenMP threads only" 1 "$(grep -c 'only its OpenMP threads' $T/err)"
    same "--nodes 0" $T/exit_static segv
else
    echo "SKIP: no static C library: the static-binary cases"
fi
echo "test_run_progs: $pass passed, $fail failed"
[ $fail -eq 0 ]
