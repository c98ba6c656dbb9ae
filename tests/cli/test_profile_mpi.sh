#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# MPI jobs: numaplace profile --out p.%r.json writes one profile per rank (the rank from the
# launcher's environment: Open MPI, MPICH/PMI, PMIx, Slurm; %p the pid, %h the host, %% a
# percent sign); advise merges several profiles of one program by site (one row where every rank
# got the same advice, a row per profile where they differ, said which); run --profile takes the
# same pattern. Under mpirun -np 2 when Open MPI is there, with the variables set by hand always.
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
need_interposer "profiles of MPI ranks" profile_mpi
if [ ! -x "$P/site_lines_v1" ]; then
    skip prog-site_lines "profiles of MPI ranks: $P/site_lines_v1 is not built"
    summary profile_mpi; exit
fi
T=$(mktemp -d /tmp/npl_test_mpi.XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
cp "$P/site_lines_v1" app
want=$(./app)
# each launcher's variable, by hand
for v in OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK SLURM_PROCID; do
    rm -f p.*.json
    env "$v=5" $N profile --out 'p.%r.json' -- ./app >out 2>err
    check "$v=5: --out p.%r.json is p.5.json, the program's output" "0 1 1 $want" \
        "$? $(test -s p.5.json && echo 1) $(grep -c 'the profile will go to p.5.json$' err) $(cat out)"
done
$N profile --out "q.%p.%h.%%.json" -- ./app >/dev/null 2>err
check "%p %h %%: the pid, the host, a percent sign" 1 \
    "$(ls | grep -c "^q\.[0-9][0-9]*\.$(hostname | tr -d /)\.%\.json$")"
env -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u PMIX_RANK -u SLURM_PROCID $N profile --out 'p.%r.json' -- sh -c 'echo ran >ran' >/dev/null 2>err
check "%r outside a launcher: status 125, one line, the program not run" "125 1 no" "$? $(wc -l <err) $(test -e ran && echo ran || echo no)"
$N profile --out 'p.%q.json' -- ./app >/dev/null 2>err
check "%q: status 125" "125 1" "$? $(grep -c '%q is not %r' err)"

# two ranks: under mpirun where it runs here, else by hand
rm -f p.*.json
as_root=
[ "$(id -u)" = 0 ] && as_root=--allow-run-as-root
if command -v mpirun >/dev/null && mpirun $as_root --oversubscribe -np 2 true >/dev/null 2>&1; then
    mpirun $as_root --oversubscribe -np 2 $N profile --out 'p.%r.json' -- ./app >out 2>err
    check "mpirun -np 2 numaplace profile --out p.%r.json: status, both ranks' output" "0 2" "$? $(grep -c "^$want\$" out)"
else
    skip mpirun "mpirun -np 2 does not run here (Open MPI: scripts/deps.sh); the ranks are set by hand"
    for r in 0 1; do OMPI_COMM_WORLD_RANK=$r $N profile --out 'p.%r.json' -- ./app >/dev/null 2>&1; done
fi
check "one profile per rank" "1 1" "$(test -s p.0.json && echo 1) $(test -s p.1.json && echo 1)"
# the ranks' samples differ from run to run (on a loaded machine one rank had 24 samples of a
# site, too few, the other 70, advised): the merge of agreeing ranks is checked on rank 1's
# arrays given rank 0's advice for the same site
python3 - p.0.json p.1.json <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
key = lambda x: (x["site"]["offset"], x["site"]["ordinal"], x["site"].get("kind"))
advice = {key(x): x["advice"] for x in a["arrays"]}
for x in b["arrays"]:
    x["advice"] = advice.get(key(x), x["advice"])
json.dump(b, open(sys.argv[2], "w"))
PY
$N advise p.0.json p.1.json >adv 2>err
nsites=$(grep -c '^site_lines.c:' adv)
check "advise of both ranks: one row per site, each for all 2 profiles" "0 2 2" \
    "$? $nsites $(grep -c '\[all 2 profiles\]' adv)"
if command -v python3 >/dev/null; then
    python3 - p.1.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["arrays"][0]["advice"]["policy"] = "cyclic"
json.dump(d, open(sys.argv[1], "w"))
PY
    $N advise p.0.json p.1.json >adv 2>err
    check "ranks advised differently: a row per profile, said which; the other site once" "0 1 1 1" \
        "$? $(grep -c '\[p.0.json\]' adv) $(grep -c '\[p.1.json\] .*' adv) $(grep -c '\[all 2 profiles\]' adv)"
    check "the summary line" 1 "$(grep -c '^2 sites: 1 with one advice for all 2 profiles, 1 advised differently' adv)"
fi
# profiles of two programs (a launcher's children): each program's own table, named
cp "$P/site_lines_v2" other
$N profile --out o.json -- ./other >/dev/null 2>&1
$N advise p.0.json o.json p.1.json >adv 2>err
check "profiles of two programs: grouped by program, each named" "0 1 1 1" \
    "$? $(grep -c "^2 profiles of $T/app, merged by site: p.0.json p.1.json\$" adv) $(grep -c "^profile o.json: $T/other, " adv) $(grep -c '^3 profiles of 2 programs' adv)"
# children: a script starting two programs, --out with %p: each program its own profile
rm -f c.*.json
$N profile --out 'c.%p.json' -- sh -c './app; ./other' >out 2>err
check "profile of a script: status, both programs' output" "0 2" "$? $(grep -c "^$want\$" out)"
check "profile of a script: one profile per program, said" "2 2 1" \
    "$(ls c.*.json | wc -l) $(grep -c '^numaplace profile: wrote c\.[0-9]*\.json' err) $(grep -c 'the profiles will go to c.%p.json' err)"
$N advise c.*.json >adv 2>&1
check "advise of the script's profiles: each named by its program" "1 1 1" \
    "$(grep -c "^profile c\.[0-9]*\.json: $T/app, " adv) $(grep -c "^profile c\.[0-9]*\.json: $T/other, " adv) $(grep -c '^2 profiles of 2 programs' adv)"
$N advise p.0.json /dev/null >/dev/null 2>err
check "advise of a profile and a non-profile: status 2" 2 $?
$N advise --json p.0.json p.1.json >/dev/null 2>err
check "advise --json of several: status 2, said" "2 1" "$? $(grep -c 'one profile at a time' err)"
# run --profile takes the same pattern: each rank its own
OMPI_COMM_WORLD_RANK=1 $N run --verbose --profile 'p.%r.json' -- ./app >out 2>err
check "run --profile p.%r.json as rank 1: p.1.json applied" "0 $want 1" \
    "$? $(cat out) $(grep -c "profile $T/p.1.json: 2 of 2 arrays matched again" err)"
summary profile_mpi
