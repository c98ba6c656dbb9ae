#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Tests of tools/numavm itself, run on the host: a CPU-less and memory-less shape checked from
# inside by tests/guest/numavm_selftest.sh and from outside (the other shapes' self-tests run in
# tests/guest/run.sh's boots), balancing is off unless asked, the
# command's status and arguments come through, a hang is killed (125), two guests can run at once.
# Prints "harness_test: N passed, M failed, 0 skipped" last; exit status 0 only if all passed.
set -u
cd "$(dirname "$0")/../.."
pass=0 fail=0
check() { # NAME WANT GOT
    if [ "$2" = "$3" ]; then pass=$((pass + 1)); echo "ok   $1"
    else fail=$((fail + 1)); echo "FAIL $1: got [$3] want [$2]"; fi
}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
st=tests/guest/numavm_selftest.sh
np=auto; [ -z "${NUMAPLACE_BIN:-}" ] && [ -f build/numaplace ] && np=yes

# The self-test (tests/guest/numavm_selftest.sh) runs inside the boots that tests/guest/run.sh
# makes anyway (2 nodes x 2 CPUs, 4, 8 x 1, 4 with balancing on and huge pages) and
# scripts/reliability.sh's TSan guest (THP always); here, one guest with a CPU-less and a
# memory-less node, seen from outside and by the self-test, which runs the library there too: its
# topology (2 usable nodes), a placement (demo) and the soak (guest_soak). (It was the reliability
# stage's own boot of the same shape.)
B=${BUILD:-build}
shape='for d in /sys/devices/system/node/node[0-9]*; do
  printf "%s cpus=%s mem=%s dist=%s\n" "${d##*/}" "$(cat $d/cpulist)" \
    "$(grep -c "MemTotal: *[1-9]" $d/meminfo)" "$(cat $d/distance)"; done
  echo "balancing=$(cat /proc/sys/kernel/numa_balancing)"
  numavm_selftest.sh --nodes 3 --cpus-per-node 2 >/dev/null; echo "wrong shape: $? failures"
  numavm_selftest.sh --nodes 3 --cpus-per-node 2 --cpuless 2 --memless 1 --numaplace '$np' >selftest.out
  echo "self-test: $? failures, $(tail -1 selftest.out)"
  numaplace topo --json >topo.json; echo "topo: $?"
  numaplace demo --policy cyclic --mib 4 >/dev/null; echo "demo: $?"
  guest_soak --nodes 3 --cpus-per-node 2 --seconds 4 >soak.out 2>&1; echo "soak: $?"
  grep -c "\"node_count\": 2" topo.json
  grep -Ec "\"os_id\": 1,.*\"memory_bytes\": 0[,}]" topo.json
  grep -Ec "\"os_id\": 2,.*\"cpus\": \[\]" topo.json
  tail -1 soak.out'
t0=$(date +%s)
out=$(NUMAPLACE_BIN=$B/numaplace tools/numavm --quiet --nodes 3 --cpus-per-node 2 --mem-per-node 256 \
    --cpuless 2 --memless 1 --thp always --add $st --add "$B/guest/guest_soak" --add tests/expected-skips.txt \
    -- env "CI=${CI:-}" NPL_EXPECTED_SKIPS=/usr/local/bin/expected-skips.txt sh -c "$shape")
echo "     (3 nodes, CPU-less and memory-less: $(( $(date +%s) - t0 )) s)"
check "3 nodes, node 2 CPU-less, node 1 memory-less (outside view)" \
"node0 cpus=0-1 mem=1 dist=10 20 30
node1 cpus=2-3 mem=0 dist=20 10 20
node2 cpus= mem=1 dist=30 20 10
balancing=0
wrong shape: 3 failures" "$(echo "$out" | sed -n 1,5p)"
sum=$(echo "$out" | sed -n 6p)
[[ "$sum" =~ ^self-test:\ 0\ failures,\ numavm_selftest:\ [1-9][0-9]*\ passed,\ 0\ failed,\ [0-9]+\ skipped$ ]] && sum=ok
check "3 nodes, CPU-less and memory-less: the self-test passes" ok "$sum"
check "3 nodes, CPU-less and memory-less: topo, demo and guest_soak exit 0" \
    "topo: 0 demo: 0 soak: 0" "$(echo "$out" | sed -n 7,9p | tr '\n' ' ' | sed 's/ $//')"
check "3 nodes: topo --json has 2 usable nodes, node 1 no memory, node 2 no CPUs" "1 1 1" \
    "$(echo "$out" | sed -n 10,12p | tr '\n' ' ' | sed 's/ $//')"
soak=$(echo "$out" | sed -n 13p)
[[ "$soak" =~ ^guest_soak:\ [1-9][0-9]*\ passed,\ 0\ failed,\ [0-9]+\ skipped$ ]] && soak=ok
check "3 nodes: guest_soak's summary" ok "$soak"
[ "$soak" = ok ] || echo "$out" | sed 's/^/     | /'

# two guests at once: status and quoting in one, a hang killed by --timeout in the other
tools/numavm --quiet --nodes 1 --timeout 30 -- sh -c 'echo started; sleep 600' > "$tmp/hang" 2> "$tmp/hang.err" &
hpid=$!
out=$(tools/numavm --quiet --nodes 1 -- sh -c 'printf "[%s]" "$@"; exit 7' x "a b" "it's" '$HOME' '"q"' ' ')
check "exit status comes through" 7 $?
check "arguments survive quoting" "[a b][it's][\$HOME][\"q\"][ ]" "$out"
wait $hpid
check "a hang is killed by --timeout: 125" 125 $?
check "the hung command had started" started "$(cat "$tmp/hang")"
check "the hang is reported" 1 "$(grep -c 'FAILED: timeout after 30 s' "$tmp/hang.err")"

tools/numavm --quiet --nodes 9 -- true >/dev/null 2>&1
check "9 nodes refused: 125" 125 $?
tools/numavm --quiet --nodes 2 --cpuless 1 --memless 1 -- true >/dev/null 2>&1
check "a node with neither CPUs nor memory refused: 125" 125 $?

echo "harness_test: $pass passed, $fail failed, 0 skipped"
[ $fail -eq 0 ]
