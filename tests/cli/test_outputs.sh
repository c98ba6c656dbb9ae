#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# measure/report output places: refused before measuring, with exit 1 and a clear message:
# symbolic links, non-regular files (/dev/full), a --out DIR that is a file, HOME unset without
# NUMAPLACE_CONFIG; and the default path is the one the library reads.
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
case $N in /*) ;; *) N=$(pwd)/$N ;; esac
T=$(mktemp -d /tmp/npl_out.XXXXXX)
trap 'rm -rf "$T"' EXIT
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
cd "$T" || exit 1

# measure --out LINK: refused, the link and its target untouched
printf '[policy]\ndefault = cyclic\n' >target.conf
ln -s target.conf link.conf
$N measure --quick --out link.conf >/dev/null 2>err; check "measure --out symlink: 1" 1 $?
check "measure --out symlink: message" 1 "$(grep -c 'symbolic link' err)"
check "measure --out symlink: still a link" yes "$([ -L link.conf ] && echo yes)"
check "measure --out symlink: target untouched" 0 "$(grep -c factors target.conf)"
check "measure --out symlink: nothing measured (fail fast)" 0 "$(grep -c '^measure:' err)"
# a dangling link too
ln -s nowhere.conf dangling.conf
$N measure --quick --out dangling.conf >/dev/null 2>&1; check "measure --out dangling symlink: 1" 1 $?
check "measure --out dangling symlink: nothing created" no "$([ -e nowhere.conf ] && echo yes || echo no)"

# measure --out /dev/full: not a regular file, refused at once
$N measure --quick --out /dev/full >/dev/null 2>err; check "measure --out /dev/full: 1" 1 $?
check "measure --out /dev/full: nothing measured" 0 "$(grep -c '^measure:' err)"
# a directory that cannot be written in
$N measure --quick --out "$T/no/such/dir/c.conf" >/dev/null 2>err; check "measure --out in a missing dir: 1" 1 $?
check "measure --out in a missing dir: nothing measured" 0 "$(grep -c '^measure:' err)"

# HOME unset, no NUMAPLACE_CONFIG: refused, naming --out; nothing written in the current directory
env -u HOME -u NUMAPLACE_CONFIG $N measure --quick >/dev/null 2>err; check "measure, HOME unset: 1" 1 $?
check "measure, HOME unset: names --out" 1 "$(grep -c -- '--out' err)"
check "measure, HOME unset: no ./.config" no "$([ -e .config ] && echo yes || echo no)"
# HOME set: the file the library reads (~/.config/numaplace/config), directories created
mkdir home
env -u NUMAPLACE_CONFIG HOME="$T/home" $N measure --quick >/dev/null 2>&1; check "measure, HOME set: 0" 0 $?
check "measure, HOME set: wrote ~/.config/numaplace/config" 1 "$(grep -c '^latency_ns.0 = ' home/.config/numaplace/config)"
# NUMAPLACE_CONFIG wins
env HOME="$T/home" NUMAPLACE_CONFIG="$T/env.conf" $N measure --quick >/dev/null 2>&1; check "measure, NUMAPLACE_CONFIG: 0" 0 $?
check "measure, NUMAPLACE_CONFIG: written there" 1 "$(grep -c '^latency_ns.0 = ' env.conf)"
# --no-write needs no output place
env -u HOME -u NUMAPLACE_CONFIG $N measure --quick --no-write >/dev/null 2>&1; check "measure --no-write, HOME unset: 0" 0 $?

# report --out /dev/full, --out a regular file: fail at once
$N report --quick --no-plots --out /dev/full >/dev/null 2>err; check "report --out /dev/full: 1" 1 $?
check "report --out /dev/full: nothing measured" 0 "$(grep -c '^measure:' err)"
: >afile
$N report --quick --no-plots --out afile >/dev/null 2>err; check "report --out FILE: 1" 1 $?
check "report --out FILE: message" 1 "$(grep -c 'not a directory' err)"
check "report --out FILE: nothing measured" 0 "$(grep -c '^measure:' err)"
# a read-only directory (root writes anywhere: as root, the report runs as nobody)
mkdir ro && chmod 555 ro
as_user=""
if [ "$(id -u)" -eq 0 ]; then
    chmod 755 "$T" # nobody must reach ro
    as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
    command -v setpriv >/dev/null 2>&1 || as_user=none
fi
if [ "$as_user" = none ]; then
    skip setpriv "report --out read-only dir: root, and no setpriv (util-linux) to run as nobody"
else
    env HOME="$T/home" $as_user $N report --quick --no-plots --out ro >/dev/null 2>err
    check "report --out read-only dir: 1" 1 $?
    check "report --out read-only dir: message" 1 "$(grep -c 'cannot write in ro' err)"
    check "report --out read-only dir: nothing measured" 0 "$(grep -c '^measure:' err)"
fi
chmod 755 ro

summary test_outputs
