#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The program's own OpenMP binding under `numaplace run` (host; the guest version with several
# nodes is tests/guest/guest_ompbind.c). Without --pin, run must leave it exactly as it is without
# numaplace: for every binding form (OMP_PLACES in each form, OMP_PROC_BIND, GOMP_CPU_AFFINITY,
# KMP_AFFINITY) and every runtime (gcc/libgomp, clang/libomp, gcc on a preloaded libomp), each
# thread's affinity mask (and its CPU when the mask is one CPU) under `run --`,
# `run --policy cyclic --` and a config that pins by default is the plain run's, line by line.
# The oversubscription warning fires exactly for the bindings that put 2 threads on 1 CPU.
# --pin replaces the program's binding, with one note.
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
P=$(dirname "$N")/progs
T=$(mktemp -d /tmp/npl_test_ompbind.XXXXXX)
trap 'rm -rf "$T"' EXIT
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, ok, bad, skip, summary
NC=$(nproc)
if [ "$NC" -lt 2 ]; then
    skip one-cpu "the program's own OpenMP binding under run: one CPU here, the binding forms need 2"
    summary ompbind; exit
fi
LIBOMP=$(ls /usr/lib/llvm-*/lib/libomp.so.5 2>/dev/null | head -1)
# the probe's lines with the CPU kept only where the mask is one CPU (else the scheduler picks)
norm() { awk '{ if ($6 ~ /[,-]/) $4 = "*"; print }' "$1"; }
printf '[threads]\npin = compact\n' >$T/pin.conf

# the program starts on the CPUs run was started on, whatever the OpenMP variables say
# (numaplace links an OpenMP runtime of its own, which must not bind itself to them)
plain_mask=$(grep Cpus_allowed_list /proc/self/status | cut -f2)
for form in "OMP_PLACES=cores OMP_PROC_BIND=close" "OMP_PROC_BIND=spread" "OMP_PROC_BIND=master" \
            "OMP_PLACES={1}" "GOMP_CPU_AFFINITY=1" "KMP_AFFINITY=granularity=fine,explicit,proclist=[1]"; do
    check "$form: the program starts on all CPUs ($plain_mask)" "$plain_mask" \
        "$(env $form $N run -- grep Cpus_allowed_list /proc/self/status | cut -f2)"
done
check "OMP_DISPLAY_ENV: numaplace's own runtime prints nothing" 0 \
    "$(OMP_DISPLAY_ENV=true $N run -- true 2>&1 | grep -c 'OPENMP DISPLAY ENVIRONMENT BEGIN')"

# form | threads | 1 if 2 threads end on 1 CPU (the warning must fire), else 0
cat >$T/forms <<EOF
OMP_PLACES=cores OMP_PROC_BIND=close|2|0
OMP_PLACES=cores OMP_PROC_BIND=spread|2|0
OMP_PLACES=threads OMP_PROC_BIND=close|2|0
OMP_PLACES=sockets OMP_PROC_BIND=close|2|0
OMP_PLACES=ll_caches OMP_PROC_BIND=spread|2|0
OMP_PLACES=numa_domains|2|0
OMP_PLACES=cores|-|0
OMP_PLACES={1},{0}|2|0
OMP_PLACES={0}:2:1 OMP_PROC_BIND=spread|2|0
OMP_PLACES={1} OMP_PROC_BIND=close|2|1
OMP_PLACES=cores(1)|2|1
OMP_PROC_BIND=true|2|0
OMP_PROC_BIND=spread,close|2|0
OMP_PROC_BIND=master|2|1
OMP_PROC_BIND=primary OMP_PLACES=cores|2|1
OMP_PROC_BIND=false|2|0
GOMP_CPU_AFFINITY=1 0|2|0
GOMP_CPU_AFFINITY=0-1|-|0
KMP_AFFINITY=granularity=fine,compact|2|0
KMP_AFFINITY=granularity=fine,scatter|2|0
KMP_AFFINITY=granularity=fine,explicit,proclist=[1,0]|2|0
EOF
for rt in gcc clang gcc+libomp; do
    prog=$P/omp_probe_${rt%+libomp}
    pre=
    if [ "$rt" = gcc+libomp ]; then
        pre=$LIBOMP
        [ -n "$pre" ] || { skip libomp "the binding forms under gcc on a preloaded libomp: no /usr/lib/llvm-*/lib/libomp.so.5 (libomp-dev)"; continue; }
    fi
    [ -x "$prog" ] || { skip "prog-$(basename "$prog")" "the binding forms under $rt: $prog is not built (OpenMP; clang-14)"; continue; }
    while IFS='|' read -r form th warn; do
        set -f
        # GOMP_CPU_AFFINITY=1 0 has a blank: the value is everything after the first '='
        case $form in GOMP_CPU_AFFINITY=*) vars="GOMP_CPU_AFFINITY"; val=${form#*=};; *) vars=$form; val=;; esac
        set +f
        runenv() { # runs "$@" under the form (and the runtime's preload)
            if [ -n "$val" ]; then set -- env "GOMP_CPU_AFFINITY=$val" "$@"; else set -f; set -- env $vars "$@"; set +f; fi
            [ "$th" = - ] || set -- env OMP_NUM_THREADS=$th "$@"
            [ -z "$pre" ] || set -- env LD_PRELOAD=$pre "$@"
            "$@"
        }
        runenv "$prog" >$T/plain 2>/dev/null
        lines=$(wc -l <$T/plain)
        [ "$lines" -ge 1 ] || { bad "$rt $form: the plain run printed nothing"; continue; }
        norm $T/plain >$T/plain.n
        for mode in "" "--policy cyclic" "config"; do
            if [ "$mode" = config ]; then
                NUMAPLACE_CONFIG=$T/pin.conf runenv $N run -- "$prog" >$T/run 2>$T/err
            else
                runenv $N run $mode -- "$prog" >$T/run 2>$T/err
            fi
            norm $T/run >$T/run.n
            if cmp -s $T/plain.n $T/run.n; then ok; else
                bad "$rt [$form] run ${mode:-(no flag)}: threads differ from the plain run"
                sed 's/^/  plain | /' $T/plain.n; sed 's/^/  run   | /' $T/run.n
            fi
            check "$rt [$form] run ${mode:-(no flag)}: oversubscription warning" "$warn" "$(grep -c oversubscribed $T/err)"
        done
    done <$T/forms
    # --pin is explicit: it replaces the program's binding (threads on --pin's CPUs), one note
    OMP_PLACES=cores OMP_PROC_BIND=close OMP_NUM_THREADS=2 LD_PRELOAD=$pre $N run --pin 1,0 -- "$prog" >$T/run 2>$T/err
    check "$rt --pin 1,0 over OMP_PLACES=cores: thread 0 on CPU 1, thread 1 on CPU 0" \
        "thread 0 cpu 1 mask 1;thread 1 cpu 0 mask 0;" "$(awk '{printf "%s %s %s %s %s %s;", $1, $2, $3, $4, $5, $6}' $T/run)"
    check "$rt --pin over the program's binding: one note naming it" 1 \
        "$(grep -c 'note: --pin 1,0 replaces the program.s own OpenMP binding (OMP_PLACES=cores OMP_PROC_BIND=close)' $T/err)"
done
# --verbose and --json say the program's binding is kept, and the config's pin is not applied
OMP_PLACES=cores OMP_PROC_BIND=close NUMAPLACE_CONFIG=$T/pin.conf $N run -v -- true 2>$T/err
check "--verbose: the program's own binding is kept" 1 "$(grep -c "pin       none: the program's own OpenMP binding is kept (OMP_PLACES=cores OMP_PROC_BIND=close): its threads on $NC CPU(s)" $T/err)"
check "--verbose: the config's pin is not applied over it" 1 "$(grep -c "the config's \[threads\] pin = compact is not applied" $T/err)"
OMP_PLACES={0} OMP_NUM_THREADS=2 $N run --json -- true 2>$T/j.json
check "--json: program_binding, its CPUs and the warning" "OMP_PLACES={0} 1 1" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(d["program_binding"], d["program_binding_cpus"], sum("oversubscribed" in w for w in d["warnings"]))' $T/j.json)"
check "no binding, no config: the config's pin still applies" "compact" "$(NUMAPLACE_CONFIG=$T/pin.conf $N run -- sh -c 'echo $NUMAPLACE_PIN')"
check "a binding variable: the config's pin is not passed" "" "$(OMP_PROC_BIND=close NUMAPLACE_CONFIG=$T/pin.conf $N run -- sh -c 'echo $NUMAPLACE_PIN')"
summary ompbind
