#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Hostile suite, signal chaining: a program's own SIGSEGV/SIGBUS handling meets numaplace's
# next-touch faults (docs/RELIABILITY.md, docs/NEXT_TOUCH.md).
#  1. tests/progs/sig_styles (gcc/libgomp and clang/libomp builds), every mode: handler installed
#     before and after arming, plain signal(), guard pages left with siglongjmp, what sigaction/
#     signal/sigset/sysv_signal/siginterrupt/sigignore report, SA_RESETHAND, SA_NODEFER (a fault
#     and an armed touch inside the handler), a nested fault without it, SA_ONSTACK + sigaltstack
#     (a stack overflow), SIG_IGN, SIG_DFL, SIGBUS (a truncated file), a thread blocking SIGSEGV
#     and SIGBUS (and the thread it creates), a fault while blocked, a SIGSEGV sent while blocked,
#     sigsuspend. Each under `run --next-touch` (armed at each new parallel region) and under
#     `run --policy cyclic` (the interposer without next-touch) must give the exit status and the
#     stdout of the program alone; under --next-touch stderr must show the array armed.
#  2. tests/progs/sig_api: the library's next-touch (npl_next_touch_arm) with the program's own
#     handler: before arming, after (npl_fault_handle first, or arming again), and after with a
#     plain handler under the interposer; stdout/status equal to the unarmed run, faults > 0.
#  3. A JVM (when java and javac are here): its implicit null checks are SIGSEGVs; with a library
#     arming and touching next-touch memory inside it (nt_agent, LD_PRELOAD), alone and under
#     `run --next-touch`: the Java program's output and status as alone, every touch resolved.
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
need_interposer "signal chaining under the interposer" test_hostile_signals
[ -x "$P/sig_api" ] || { bad "$P/sig_api is not built"; summary test_hostile_signals; exit; }
T=$(mktemp -d /tmp/npl_test_signals.XXXXXX)
trap 'rm -rf "$T"' EXIT
# same NAME ENVREF OPTS PROG ARGS: status and stdout of PROG under run OPTS (or, OPTS "-", with
# the environment ENVREF unset) equal those of PROG run with ENVREF
same() {
    name=$1 envref=$2 opts=$3
    shift 3
    env $envref timeout 120 "$@" >$T/ref 2>$T/referr
    r1=$?
    if [ "$opts" = "-" ]; then timeout 120 "$@" >$T/got 2>$T/err
    else timeout 120 $N run $opts -- "$@" >$T/got 2>$T/err; fi
    r2=$?
    check "$name: status, output" "$r1 $(cksum <$T/ref)" "$r2 $(cksum <$T/got)"
    [ "$r1 $(cksum <$T/ref)" = "$r2 $(cksum <$T/got)" ] || { diff $T/ref $T/got | head -5; head -3 $T/err; }
}
MODES="before after plain_after guard report resethand nodefer defer onstack ign dfl bus bus_dfl
blocked blocked_fault blocked_kill suspend"
built=0
# full arms on a one-node host too (else only samples there: no page can move)
export NUMAPLACE_NEXT_TOUCH_FULL=1
for prog in sig_styles_gcc sig_styles_clang; do
    [ -x "$P/$prog" ] || { skip "prog-$prog" "$prog: $P/$prog is not built (OpenMP; clang-14)"; continue; }
    built=$((built + 1))
    for m in $MODES; do
        same "$prog $m, run --next-touch" "X=1" "--next-touch" "$P/$prog" "$m"
        check "$prog $m, run --next-touch: the array was armed" 1 "$(grep -c 'armed 1' $T/err | awk '{print ($1 >= 1)}')"
        same "$prog $m, run --policy cyclic" "X=1" "--policy cyclic" "$P/$prog" "$m"
    done
done
unset NUMAPLACE_NEXT_TOUCH_FULL
check "sig_styles built by gcc and clang" 2 "$built"

# the library: unarmed reference (NPL_SIG_NOARM=1) against armed runs
for m in before after_handle rearm after; do
    if [ "$m" != after ]; then # without the interposer, a handler installed later must be told
        same "sig_api $m, no interposer" "NPL_SIG_NOARM=1" "-" "$P/sig_api" "$m"
        check "sig_api $m, no interposer: next-touch faults handled" 1 "$(awk '/next-touch faults/ {print ($4 > 0)}' $T/err)"
    fi
    for o in "--policy cyclic" "--next-touch"; do
        same "sig_api $m, run $o" "NPL_SIG_NOARM=1" "$o" "$P/sig_api" "$m"
        check "sig_api $m, run $o: next-touch faults handled" 1 "$(awk '/next-touch faults/ {print ($4 > 0)}' $T/err)"
    done
done

# a JVM
if command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 && [ -f "${NT_AGENT:-}" ]; then
    cat >$T/Npe.java <<'EOF'
public class Npe {
    static int[] maybe(int i) { return (i % 3 == 0) ? null : new int[] {i}; }
    public static void main(String[] a) {
        long caught = 0, sum = 0;
        for (int i = 0; i < 300000; i++) {
            int[] x = maybe(i);
            try { sum += x[0]; } catch (NullPointerException e) { caught++; }
        }
        System.out.println("caught " + caught + " sum " + sum);
    }
}
EOF
    if javac -d $T $T/Npe.java 2>$T/javac.err; then
        same "java, run --next-touch" "X=1" "--next-touch" java -cp $T Npe
        for o in - "--next-touch"; do
            how="under run $o"
            [ "$o" = - ] && how="without the interposer"
            export LD_PRELOAD="$NT_AGENT" # it does nothing in numaplace itself (not java)
            same "java with next-touch armed inside (nt_agent), $how" "LD_PRELOAD=" "$o" java -cp $T Npe
            unset LD_PRELOAD
            check "java with nt_agent, $how: 20 rounds, every touch resolved, faults handled" \
                  "20 0 1" "$(awk '/^nt_agent:/ {gsub(",", ""); print $3, $9, ($6 > 0)}' $T/err)"
        done
    else
        bad "javac failed: $(head -1 $T/javac.err)"
    fi
else
    if [ -f "${NT_AGENT:-}" ]; then skip java "the JVM cases: no java/javac (openjdk-17-jdk-headless)"
    else bad "the JVM cases: NT_AGENT (${NT_AGENT:-unset}) is not built"; fi
fi
# Python's faulthandler (SA_NODEFER | SA_ONSTACK on its own sigaltstack): on a real segfault it
# prints the traceback, restores the previous action and raises the signal again
if command -v python3 >/dev/null 2>&1; then
    crash='import ctypes; ctypes.string_at(0)'
    python3 -X faulthandler -c "$crash" >/dev/null 2>$T/ref
    r1=$?
    $N run --next-touch -- python3 -X faulthandler -c "$crash" >/dev/null 2>$T/got
    r2=$?
    check "python3 -X faulthandler, a segfault, run --next-touch: status, traceback" \
          "$r1 $(sed 's/0x[0-9a-f]*/ADDR/g' $T/ref | cksum)" "$r2 $(sed 's/0x[0-9a-f]*/ADDR/g' $T/got | cksum)"
    check "python3 -X faulthandler: died of SIGSEGV" 139 "$r1"
else
    skip python3 "Python's faulthandler case: no python3"
fi
summary test_hostile_signals
