#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Sites a human can read, profiles that survive a rebuild (cli/sites.c, libdw):
#  - a program built with -g, profiled: each heap site stored with its function, file:line and
#    line_offset; advise shows file:line;
#  - the same program rebuilt with one line of another function changed (another build-id, other
#    offsets): run --profile finds both arrays again, says so, and places them (--verbose: 2 of 2
#    matched); a rebuilt program whose sites cannot be found is refused as before.
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
need_interposer "profile sites by file:line" profile_sites
if [ ! -x "$P/site_lines_v1" ] || [ ! -x "$P/site_lines_v2" ]; then
    skip prog-site_lines "profile sites: $P/site_lines_v1 and _v2 are not built"
    summary profile_sites; exit
fi
if [ "${NPL_LIBDW:-1}" != 1 ]; then
    skip libdw "profile sites by file:line: numaplace was built without libdw (scripts/deps.sh installs libdw-dev)"
    summary profile_sites; exit
fi
T=$(mktemp -d /tmp/npl_test_sites.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
cp "$P/site_lines_v1" app
want=$(./app)
$N profile --out p.json -- ./app >out 2>err
check "profile: the program's output" "$want" "$(cat out)"
src=site_lines.c
l1=$(grep -n 'site 1: make' "$TESTS/progs/$src" | cut -d: -f1)
l2=$(grep -n 'site 2: main' "$TESTS/progs/$src" | cut -d: -f1)
$N advise p.json >adv 2>&1
check "advise shows both sites by file:line" "1 1" "$(grep -c "^$src:$l1 " adv) $(grep -c "^$src:$l2 " adv)"
if command -v python3 >/dev/null; then
    check "the profile stores function, file:line and line_offset" "main $src:$l2 1|make $src:$l1 1" "$(python3 -c '
import json, sys
d = json.load(open("p.json"))
print("|".join(sorted("%s %s %d" % (a["site"]["symbol"], a["site"]["where"], "line_offset" in a["site"]) for a in d["arrays"])))')"
fi
# rebuilt: another build-id, the same function and file:line
cp "$P/site_lines_v2" app
check "the rebuilt program differs" 1 "$(cmp -s "$P/site_lines_v1" app || echo 1)"
$N run --verbose --profile p.json -- ./app >out 2>err
check "run --profile on the rebuilt program: status, output" "0 $want" "$? $(cat out)"
check "run --profile: says the arrays were found again" 1 \
    "$(grep -c 'the program was rebuilt: 2 of 2 arrays found again by function, file:line and ordinal; 0 not found' err)"
check "run --profile: both placed as the profile advises" 1 "$(grep -c ': 2 of 2 arrays matched again' err)"
# stripped of its line table and symbols: nothing can be found, refused as another program
strip -o app "$P/site_lines_v2" 2>/dev/null && {
    $N run --profile p.json -- ./app >out 2>err
    check "a rebuilt program without symbols: refused (125), said" "125 1" \
        "$? $(grep -c 'none of its 2 arrays found again' err)"
}
summary profile_sites
