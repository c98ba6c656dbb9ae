#!/bin/bash
# Tests of tools/numavm itself (host side): the guest has exactly the requested shape, the
# command's status and arguments come through, balancing is off unless asked, a hang is killed.
set -u
cd "$(dirname "$0")/../.."
pass=0 fail=0
check() { if [ "$2" = "$3" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1: got [$3] want [$2]"; fi; }
shape='for d in /sys/devices/system/node/node[0-9]*; do
  printf "%s cpus=%s mem=%s dist=%s\n" "${d##*/}" "$(cat $d/cpulist)" \
    "$(grep -c "MemTotal: *[1-9]" $d/meminfo)" "$(cat $d/distance)"; done
  echo "balancing=$(cat /proc/sys/kernel/numa_balancing)"'
out=$(tools/numavm --quiet --nodes 3 --cpus-per-node 2 --cpuless 2 --memless 1 -- sh -c "$shape")
check "3 nodes, node 2 CPU-less, node 1 memory-less" \
"node0 cpus=0-1 mem=1 dist=10 20 30
node1 cpus=2-3 mem=0 dist=20 10 20
node2 cpus= mem=1 dist=30 20 10
balancing=0" "$out"
out=$(tools/numavm --quiet --nodes 8 --balancing -- sh -c "$shape" | sed -n '8p;9p')
check "8 nodes, balancing on" "node7 cpus=7 mem=1 dist=80 70 60 50 40 30 20 10
balancing=1" "$out"
out=$(tools/numavm --quiet --nodes 1 -- sh -c 'printf "[%s]" "$@"; exit 7' x "a b" "it's" '$HOME')
check "exit status" 7 $?
check "arguments survive quoting" "[a b][it's][\$HOME]" "$out"
tools/numavm --quiet --nodes 1 --timeout 2 -- sleep 60 >/dev/null 2>&1
check "a hang is killed: 125" 125 $?
tools/numavm --quiet --nodes 9 -- true >/dev/null 2>&1
check "bad shape refused: 125" 125 $?
echo "harness_test: $pass passed, $fail failed"
[ $fail -eq 0 ]
