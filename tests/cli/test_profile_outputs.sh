#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Where numaplace's outputs go and what they leave behind (issue 36, items 5-8):
#  - a profile, an advice file, an HTML page: a regular file (a temporary file renamed) or a
#    character device written in place; a FIFO, a directory that does not exist, a read-only
#    directory refused in one line, profile refusing BEFORE the program runs; /dev/null stays a
#    character device (as root: the case that replaced it for the whole machine);
#  - kill -9 of numaplace profile leaves no raw profile in /dev/shm, $TMPDIR or /tmp;
#  - a site name holding terminal escapes reaches the terminal escaped (advise, run --profile);
#  - stored advice naming a node this machine lacks is said, and counted under --verbose.
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
need_interposer "numaplace profile's outputs" profile_outputs
if [ ! -x "$P/profile_edge" ]; then
    skip prog-profile_edge "numaplace profile's outputs: $P/profile_edge is not built"
    summary profile_outputs; exit
fi
T=$(mktemp -d /tmp/npl_test_outputs.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
prog="$P/profile_edge touch"

# ---- item 5: files ----
# shellcheck disable=SC2086
$N profile --out p.json -- $prog >/dev/null 2>err
check "profile to a regular file: status" 0 $?
check "profile says where the profile will go, before the run" 1 "$(grep -c '^numaplace profile: the profile will go to p.json$' err)"
check "a regular file written" "1 0" "$(test -f p.json && echo 1) $(ls | grep -c '\.tmp\.')"
before=$(stat -c '%F %t:%T' /dev/null)
# shellcheck disable=SC2086
$N profile --out /dev/null -- $prog >/dev/null 2>err
check "profile --out /dev/null: status" 0 $?
check "profile --out /dev/null: /dev/null is still the character device" "$before" "$(stat -c '%F %t:%T' /dev/null)"
check "profile --out /dev/null: said to be written in place" 1 "$(grep -c 'will go to /dev/null (a device: written in place)' err)"
if [ -w /dev/full ]; then
    # shellcheck disable=SC2086
    $N profile --out /dev/full -- $prog >/dev/null 2>err
    check "profile --out /dev/full: status 125, ENOSPC said" "125 1" "$? $(grep -c 'cannot write /dev/full: No space left on device' err)"
    check "profile --out /dev/full: still a character device" "character special file" "$(stat -c '%F' /dev/full)"
fi
mkfifo fifo
# refused before the program runs: the program would write ran.txt
refused() { # name, expected reason (grep), --out value
    $N profile --out "$3" -- sh -c 'echo ran >ran.txt' >/dev/null 2>err
    check "profile --out $1: status 125, one line, the program not run" "125 1 1 no" \
        "$? $(wc -l <err) $(grep -c "cannot write .*: $2" err) $(test -e ran.txt && echo ran || echo no)"
}
refused "a FIFO" "it is a FIFO" fifo
refused "a directory that does not exist" "its directory does not exist" nodir/p.json
refused "a directory" "it is a directory" .
check "the FIFO is still a FIFO" fifo "$(stat -c '%F' fifo)"
mkdir ro
chmod 555 ro
if touch ro/x 2>/dev/null; then
    rm -f ro/x
    # root writes in a mode-555 directory: a read-only mount is the read-only case then
    if mount -t tmpfs -o ro,size=64k none ro 2>/dev/null; then
        refused "a read-only file system" "its directory is on a read-only file system" ro/p.json
        umount ro
    else
        skip root-no-readonly-dir "a read-only directory: root writes in a mode-555 one and cannot mount a read-only one here"
    fi
else
    refused "a read-only directory" "its directory is not writable" ro/p.json
fi
ln -s p.json link.json
refused "a symbolic link to a file" "it is a symbolic link" link.json

# advise --write and --html: the same rules
cp p.json q.json
$N advise q.json --write /dev/null >/dev/null 2>err
check "advise --write /dev/null: status, still a device" "0 $before" "$? $(stat -c '%F %t:%T' /dev/null)"
$N advise q.json --html /dev/null >/dev/null 2>err
check "advise --html /dev/null: status, still a device" "0 $before" "$? $(stat -c '%F %t:%T' /dev/null)"
$N advise q.json --write fifo >/dev/null 2>err
check "advise --write FIFO: refused in one line" "1 1" "$? $(grep -c 'cannot write fifo: it is a FIFO' err)"
$N advise q.json --html fifo >/dev/null 2>err
check "advise --html FIFO: refused in one line" "1 1" "$? $(grep -c 'cannot write fifo: it is a FIFO' err)"
$N advise q.json --write nodir/q.json >/dev/null 2>err
check "advise --write into no directory: refused" "1 1" "$? $(grep -c 'its directory does not exist' err)"
$N advise q.json --write q2.json >/dev/null 2>err
check "advise --write a regular file: written" "0 1" "$? $(test -s q2.json && echo 1)"

# ---- item 6: no raw profile survives a kill -9 of numaplace profile (nor of the program) ----
# (other processes on this machine may make files of that name: the program's own mapping of the
# raw profile is what shows it has none)
TMPDIR=$T $N profile --out k.json -- sleep 30 >/dev/null 2>err &
pid=$!
i=0
while [ -z "$(pgrep -P $pid)" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
child=$(pgrep -P $pid)
sleep 0.5 # the interposer has mapped the raw profile in the constructor
maps=$(grep 'numaplace-profile' /proc/$child/maps 2>/dev/null)
raw=$(readlink /proc/$child/fd/* 2>/dev/null | grep -c 'numaplace-profile')
kill -9 $pid
wait $pid 2>/dev/null
check "the raw profile: mapped by the program, a memfd or a deleted file (nothing to survive a kill)" "1 0" \
    "$([ -n "$maps" ] && echo 1) $(printf '%s\n' "$maps" | grep -v 'memfd:\|(deleted)' | grep -c .)"
[ -n "$child" ] && kill -9 "$child" 2>/dev/null
check "kill -9: nothing left in TMPDIR" 0 "$(ls "$T" | grep -c '^numaplace-profile')"
check "the program opened the raw profile by /proc/PID/fd, holding no extra descriptor" 0 "$raw"
# shellcheck disable=SC2086
$N profile --out k.json -- sh -c 'kill -9 $$' >/dev/null 2>err
check "the program killed by SIGKILL: profile dies of it, the profile written" "137 1" "$? $(grep -c 'wrote k.json' err)"

# ---- item 8: what a profile names reaches the terminal escaped ----
if command -v python3 >/dev/null; then
    # shellcheck disable=SC2086
    $N profile --threshold 64K --out e.json -- $prog >/dev/null 2>&1
    python3 - e.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for a in d["arrays"]:
    a["site"]["where"] = "\x1b]0;pwned\x07\x1b[2Jevil.c:7\u0085"
    if a.get("advice"):
        a["advice"]["reason"] = "\x1b[31mred\x1b[0m"
json.dump(d, open(sys.argv[1], "w"))
PY
    esc=$(printf '\033')
    $N advise e.json >out 2>&1
    check "advise: no raw ESC, the site and the reason escaped" "0 2 2" \
        "$(grep -c "$esc" out) $(grep -c '\\x1b\]0;pwned\\x07\\x1b\[2Jevil.c:7\\xc2\\x85' out) $(grep -c '\\x1b\[31mred\\x1b\[0m' out)"
    # shellcheck disable=SC2086
    $N run --verbose --threshold 64K --profile e.json -- $prog >/dev/null 2>out
    check "run --profile --verbose: no raw ESC, the site escaped" "0 1" \
        "$(grep -c "$esc" out) $(grep -c 'bytes from \\x1b\]0;pwned' out)"
else
    skip python3 "terminal escapes: no python3 to write the profile"
fi

# ---- item 7: stored advice naming a node this machine lacks: said, and counted ----
if command -v python3 >/dev/null; then
    # shellcheck disable=SC2086
    $N profile --threshold 64K --out n.json -- $prog >/dev/null 2>&1
    narr=$(python3 - n.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for a in d["arrays"]:
    if a.get("advice"):
        a["advice"]["policy"] = "bind_all:7"
json.dump(d, open(sys.argv[1], "w"))
print(sum(1 for a in d["arrays"] if a.get("advice")))
PY
)
    # shellcheck disable=SC2086
    $N run --threshold 64K --profile n.json -- $prog >out 2>err
    check "bind_all:7 on this machine: the program's output as without it" "$($prog)" "$(cat out)"
    check "bind_all:7: said once per array without --verbose" "$narr" \
        "$(grep -c 'its advised policy bind_all:7 is not applied here (policy node 7 does not exist on this machine): the default applies' err)"
    # shellcheck disable=SC2086
    $N run --verbose --threshold 64K --profile n.json -- $prog >/dev/null 2>err
    check "bind_all:7 --verbose: counted in the last line" 1 \
        "$(grep -c "arrays matched again .*; $narr arrays' advice not applied here (a node this machine lacks: the default applied)" err)"
fi

summary profile_outputs
