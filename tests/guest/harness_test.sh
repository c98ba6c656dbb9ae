#!/bin/bash
# Tests of tools/numavm itself, run on the host: each guest shape is checked from inside by
# tests/guest/numavm_selftest.sh (and one from outside), balancing is off unless asked, the
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

# boot SHAPE-OPTIONS... -- SELFTEST-OPTIONS...: one guest running the self-test
selftest() {
    local name=$1; shift
    local vm=() t0 rc
    while [ "$1" != -- ]; do vm+=("$1"); shift; done; shift
    t0=$(date +%s%N)
    tools/numavm --quiet "${vm[@]}" --add $st -- numavm_selftest.sh "$@" > "$tmp/out" 2>&1
    rc=$?
    printf '     (%s: %d.%d s)\n' "$name" $((($(date +%s%N) - t0) / 1000000000)) $((($(date +%s%N) - t0) / 100000000 % 10))
    local last; last=$(tail -1 "$tmp/out")
    [[ "$last" =~ ^numavm_selftest:\ [1-9][0-9]*\ passed,\ 0\ failed,\ [0-9]+\ skipped$ ]] && last=ok
    check "$name: self-test passes (its summary line)" "0 ok" "$rc $last"
    [ $rc = 0 ] || sed 's/^/     | /' "$tmp/out"
}
selftest "2 nodes x 2 CPUs" --nodes 2 --cpus-per-node 2 -- --nodes 2 --cpus-per-node 2 --numaplace $np
selftest "4 nodes, balancing on, THP madvise, 4 huge pages per node" \
    --nodes 4 --balancing --thp madvise --hugepages 4 -- --nodes 4 --balancing 1 --thp madvise --hugepages 4
selftest "8 nodes x 1 CPU x 256 MiB" --nodes 8 --cpus-per-node 1 --mem-per-node 256 -- --nodes 8
selftest "4 nodes x 2 CPUs, node 3 CPU-less, node 1 memory-less" \
    --nodes 4 --cpus-per-node 2 --cpuless 3 --memless 1 -- --nodes 4 --cpus-per-node 2 --cpuless 3 --memless 1

# the same kind of shape seen from outside the self-test; and the self-test catches a wrong shape
shape='for d in /sys/devices/system/node/node[0-9]*; do
  printf "%s cpus=%s mem=%s dist=%s\n" "${d##*/}" "$(cat $d/cpulist)" \
    "$(grep -c "MemTotal: *[1-9]" $d/meminfo)" "$(cat $d/distance)"; done
  echo "balancing=$(cat /proc/sys/kernel/numa_balancing)"
  numavm_selftest.sh --nodes 3 --cpus-per-node 2 >/dev/null; echo "wrong shape: $? failures"'
out=$(tools/numavm --quiet --nodes 3 --cpus-per-node 2 --cpuless 2 --memless 1 --add $st -- sh -c "$shape")
check "3 nodes, node 2 CPU-less, node 1 memory-less (outside view)" \
"node0 cpus=0-1 mem=1 dist=10 20 30
node1 cpus=2-3 mem=0 dist=20 10 20
node2 cpus= mem=1 dist=30 20 10
balancing=0
wrong shape: 3 failures" "$out"

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
