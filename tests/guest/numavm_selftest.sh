#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs INSIDE a tools/numavm guest and checks that the guest has exactly the requested shape:
#   tools/numavm --nodes 4 --cpus-per-node 2 --cpuless 3 --add tests/guest/numavm_selftest.sh \
#       -- numavm_selftest.sh --nodes 4 --cpus-per-node 2 --cpuless 3
# options (the same meaning as tools/numavm's): --nodes N --cpus-per-node K --cpuless LIST
#   --memless LIST --balancing 0|1 (default 0) --thp MODE --hugepages COUNT
#   --numaplace yes|no|auto (default auto: checked if present, skipped with a reason if not)
# It is also a program of tests/guest/run.sh's boots (the shapes they boot anyway).
# Prints PASS/FAIL lines, then "N passed, M failed"; exit status = the number of failures.
nodes="" cpn=1 cpuless="" memless="" balancing=0 thp="" hugepages="" numaplace=auto
while [ $# -gt 0 ]; do
    case "$1" in
        --nodes) nodes=$2 ;;
        --cpus-per-node) cpn=$2 ;;
        --cpuless) cpuless=$2 ;;
        --memless) memless=$2 ;;
        --balancing) balancing=$2 ;;
        --thp) thp=$2 ;;
        --hugepages) hugepages=$2 ;;
        --numaplace) numaplace=$2 ;;
        --big-mib) ;; # tests/guest/run.sh gives every guest program this one
        *) echo "numavm_selftest: unknown option '$1'" >&2; exit 99 ;;
    esac
    [ $# -ge 2 ] || { echo "numavm_selftest: $1 needs a value" >&2; exit 99; }
    shift 2
done
[ -n "$nodes" ] || { echo "numavm_selftest: --nodes N is required" >&2; exit 99; }

passed=0 failed=0 skipped=0
check() { # NAME WANT GOT
    if [ "$2" = "$3" ]; then passed=$((passed + 1)); echo "PASS $1"
    else failed=$((failed + 1)); echo "FAIL $1: got [$3], want [$2]"; fi
}
in_list() { case ",$2," in *",$1,"*) return 0 ;; esac; return 1; }
sys=/sys/devices/system/node

# node count: exactly node0..node(N-1)
got=$(cd $sys && ls -d node[0-9]* | sed 's/node//' | sort -n | tr '\n' ' ')
want=$(i=0; while [ $i -lt "$nodes" ]; do printf '%d ' $i; i=$((i + 1)); done)
check "node count $nodes (nodes: $want)" "$want" "$got"

c=0 ncpu=0
i=0
while [ $i -lt "$nodes" ]; do
    d=$sys/node$i
    # CPUs: numbered in node order, K per node that has CPUs
    if in_list $i "$cpuless"; then want=""
    elif [ "$cpn" -eq 1 ]; then want=$c; c=$((c + 1))
    else want="$c-$((c + cpn - 1))"; c=$((c + cpn)); fi
    check "node$i cpulist" "$want" "$(cat $d/cpulist 2>/dev/null)"
    # memory: present unless memory-less
    kb=$(awk '/MemTotal/ { print $4 }' $d/meminfo 2>/dev/null)
    if in_list $i "$memless"; then want=no; else want=yes; fi
    got=no; [ "${kb:-0}" -gt 0 ] && got=yes
    check "node$i has memory ($kb kB)" "$want" "$got"
    # distance row: 10 local, 10+10*|i-j| remote
    want=$(j=0; while [ $j -lt "$nodes" ]; do
        dd=$((j > i ? j - i : i - j)); printf '%d ' $((10 + 10 * dd)); j=$((j + 1)); done)
    check "node$i distances" "${want% }" "$(cat $d/distance 2>/dev/null)"
    if [ -n "$hugepages" ] && [ "$got" = yes ]; then
        check "node$i 2 MiB huge pages" "$hugepages" \
            "$(cat $d/hugepages/hugepages-2048kB/nr_hugepages 2>/dev/null)"
    fi
    i=$((i + 1))
done
check "online CPUs" "$c" "$(grep -c '^processor' /proc/cpuinfo)"
check "numa_balancing" "$balancing" "$(cat /proc/sys/kernel/numa_balancing 2>/dev/null)"
if [ -n "$thp" ]; then
    check "THP enabled" "$thp" "$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled)"
fi

p=$(command -v numaplace 2>/dev/null)
case "$numaplace" in
    yes) check "numaplace on PATH" /usr/local/bin/numaplace "$p"
         [ -n "$p" ] && { numaplace --help >/dev/null 2>&1; check "numaplace --help runs (its libraries are there)" 0 $?; } ;;
    no) check "numaplace not on PATH" "" "$p" ;;
    *) if [ -n "$p" ]; then
           check "numaplace on PATH" /usr/local/bin/numaplace "$p"
           numaplace --help >/dev/null 2>&1; check "numaplace --help runs (its libraries are there)" 0 $?
       else skipped=$((skipped + 1)); echo "SKIP numaplace on PATH: not in this guest (build/numaplace or NUMAPLACE_BIN absent)"; fi ;;
esac
check "cwd is /tmp" /tmp "$(pwd)"
case ":$PATH:" in *:/usr/local/bin:*) got=yes ;; *) got=no ;; esac
check "PATH has /usr/local/bin" yes $got

echo "numavm_selftest: $passed passed, $failed failed, $skipped skipped"
exit $failed
