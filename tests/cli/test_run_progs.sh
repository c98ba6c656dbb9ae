#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
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
SRC=$(dirname "$0")/../..
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
need_interposer "every case (programs under numaplace run)" test_run_progs
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
for prog in alloc_styles cxx_styles omp_styles_gcc omp_styles_clang fortran_omp \
            align_styles cxx_align align_styles_jemalloc cxx_align_jemalloc align_styles_tcmalloc \
            cxx_align_tcmalloc align_styles_mimalloc cxx_align_mimalloc; do
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
# a C++ plugin dlopen'ed RTLD_LOCAL (its runtime outside the global scope) under every mode
if [ -x "$P/dlopen_cxx" ] && [ -f "$P/libcxx_plugin.so" ]; then
    echo "$OPTS" | while read -r o; do
        same "$(echo "$o" | tr '|=' '  ')" "$P/dlopen_cxx" "$P/libcxx_plugin.so"
        echo "$pass $fail" >$T/counts
    done
    read -r pass fail <$T/counts
fi
# every entry point at every alignment is placed (one node: every map is one run, so lazily)
for prog in align_styles cxx_align; do
    [ -x "$P/$prog" ] || continue
    want=$(($("$P/$prog" | grep -c ' ok 1 aligned 1') + $("$P/$prog" | grep -c 'threads aligned_alloc ok 4') * 4))
    $N run -v --policy skew_mapp -- "$P/$prog" >/dev/null 2>$T/err
    check "$prog: its $want blocks are placed" "$want" "$(grep -c 'bytes: placed under skew_mapp' $T/err)"
done
# another allocator linked in: its blocks stay its own, placed where they are, and run says so
for a in jemalloc tcmalloc mimalloc; do
    [ -x "$P/cxx_align_$a" ] || { skip "prog-cxx_align_$a" "lib$a is not installed (scripts/deps.sh)"; continue; }
    want=$(($("$P/cxx_align_$a" | grep -c ' ok 1 aligned 1') + 4)) # + 4 threads' aligned_alloc
    $N run -v --policy cyclic -- "$P/cxx_align_$a" >/dev/null 2>$T/err
    check "cxx_align_$a: one line names the allocator" 1 "$(grep -c "malloc is lib$a.so.[0-9]*'s, not the C library's" $T/err)"
    check "cxx_align_$a: its $want blocks are placed where it put them" "$want" "$(grep -c "placed under cyclic where the program's allocator put it" $T/err)"
done
# A block whose map needs populated pages is placed only when it fits the memory the process may
# still use; a program that reserves much and touches little must not be killed for memory.
# Fake /proc and /sys (NUMAPLACE_FSROOT, as the library reads them): a meminfo with 100 MiB
# available, then cgroups v2 and v1 with 100 MiB limits and 10 MiB used. One node here: every
# policy has a lazy form, so --huge thp (2 MiB units: populated) makes placement populate.
mkdir -p $T/root/proc
ln -s /sys $T/root/sys
ln -s /proc/self $T/root/proc/self
printf 'MemTotal: 1000000 kB\nMemFree: 100000 kB\nMemAvailable: 100000 kB\n' >$T/root/proc/meminfo
POP="--policy skew_mapp --huge thp"
NUMAPLACE_FSROOT=$T/root $N run -v $POP -- "$P/exit_styles" reserve 200 >$T/out 2>$T/err
check "reserve 200 MiB with 100 MiB available: status, output" "0 reserved 1" "$? $(tail -1 $T/out)"
check "reserve 200 MiB with 100 MiB available: not placed, and said" 1 "$(grep -c '209715200 bytes not placed (larger than the memory available to this process now (MemAvailable leaves' $T/err)"
NUMAPLACE_FSROOT=$T/root $N run -v $POP -- "$P/exit_styles" reserve 80 >/dev/null 2>$T/err
check "reserve 80 MiB with 100 MiB available: placed" 1 "$(grep -c '83886080 bytes: placed under skew_mapp' $T/err)"
NUMAPLACE_FSROOT=$T/root $N run -v --policy cyclic -- "$P/exit_styles" reserve 200 >/dev/null 2>$T/err
check "reserve 200 MiB with 100 MiB available, cyclic: placed lazily" 1 "$(grep -c '209715200 bytes: placed under cyclic (lazily' $T/err)"
for v in 2 1; do
    R=$T/cg$v
    mkdir -p $R/proc/self $R/sys/fs/cgroup/memory/job/task $R/sys/fs/cgroup/job/task
    for e in /proc/self/*; do [ "${e##*/}" = cgroup ] || [ "${e##*/}" = mountinfo ] || ln -s "$e" $R/proc/self/; done
    for e in /sys/*; do [ "${e##*/}" = fs ] || ln -s "$e" $R/sys/; done
    ln -s /proc/meminfo $R/proc/meminfo
    if [ $v = 2 ]; then
        echo '0::/job/task' >$R/proc/self/cgroup
        echo '30 1 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw' >$R/proc/self/mountinfo
        D=$R/sys/fs/cgroup/job; echo max >$D/task/memory.max; echo 5000 >$D/task/memory.current
        echo 104857600 >$D/memory.max; echo 10485760 >$D/memory.current
    else
        echo '4:memory:/job/task' >$R/proc/self/cgroup
        echo '31 1 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory' >$R/proc/self/mountinfo
        D=$R/sys/fs/cgroup/memory/job; echo 9223372036854771712 >$D/task/memory.limit_in_bytes
        echo 5000 >$D/task/memory.usage_in_bytes; echo 104857600 >$D/memory.limit_in_bytes
        echo 10485760 >$D/memory.usage_in_bytes
    fi
    lim=$([ $v = 2 ] && echo memory.max || echo memory.limit_in_bytes)
    NUMAPLACE_FSROOT=$R $N run -v $POP -- "$P/exit_styles" reserve 80 >$T/out 2>$T/err
    check "cgroup v$v, 90 MiB left: 80 MiB reserved, status, output" "0 reserved 1" "$? $(tail -1 $T/out)"
    check "cgroup v$v, 90 MiB left: 80 MiB not placed, the limit named" 1 "$(grep -c "83886080 bytes not placed (larger than the memory available to this process now (the cgroup's $lim leaves 94371840 bytes)" $T/err)"
    NUMAPLACE_FSROOT=$R $N run -v $POP -- "$P/exit_styles" reserve 64 >/dev/null 2>$T/err
    check "cgroup v$v, 90 MiB left: 64 MiB placed" 1 "$(grep -c '67108864 bytes: placed under skew_mapp' $T/err)"
done
# RLIMIT_AS: the address space left is a limit too (and placing must not make the program fail)
$N run -v $POP -- sh -c "ulimit -v 700000; exec $P/exit_styles sparse 600 50" >$T/out 2>$T/err
check "RLIMIT_AS 683 MiB: 600 MiB reserved, status, output" "0 sparse 1" "$? $(tail -1 $T/out | cut -d' ' -f1-2)"
check "RLIMIT_AS 683 MiB: not placed, RLIMIT_AS named" 1 "$(grep -c '629145600 bytes not placed (larger than the memory available to this process now (RLIMIT_AS leaves' $T/err)"
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
# system calls on an array armed for next-touch and untouched since (full arms forced: on one node
# no page can move and ranges are only sampled): write, pread, fread, readv, fwrite and
# process_vm_readv/_writev with itself as the peer copy every byte (an armed page made them fail
# with EFAULT or stop short) and the contents are kept
for b in gcc clang; do
    if [ ! -x "$P/nt_regions_$b" ]; then
        skip "nt-io-$b" "next-touch and system calls ($b): $P/nt_regions_$b is not built"; continue
    fi
    OMP_NUM_THREADS=4 NUMAPLACE_NEXT_TOUCH_FULL=1 $N run --next-touch --threshold 1536K -- \
        "$P/nt_regions_$b" io >$T/got 2>$T/err
    check "--next-touch ($b): system calls on an armed array copy every byte, contents kept" \
        "0 1 1" "$? $(grep -c '^io: write \([0-9]*\) pread \1 fread \1 readv \1 fwrite \1 process_vm_readv \1 process_vm_writev \1 of \1 bytes$' $T/got) $(grep -c '^writes: ok$' $T/got)"
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
    skip openmp "the dlopen'ed OpenMP library cases: cannot build one with ${CC:-cc} -fopenmp"
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
    skip static-libc "the static-binary cases: no static C library (libc6-dev)"
fi
summary test_run_progs
