#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# numaplace advise on the hand-written profiles of tests/profiles/ (2 nodes, 4 threads pinned
# compact: threads 0-1 on node 0, 2-3 on node 1): the pattern and policy each was written to
# show, stored advice shown as stored, --json against docs/schema/advise.schema.json, the profiles
# against docs/schema/profile.schema.json, --write, --html (the chart's numbers against --json, a
# hostile site name escaped, unwritable places refused), and every bad profile of
# tests/profiles/bad/: exit status 2 and one line naming the file, nothing started.
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
SRC=${SRC:?set SRC to the source directory}
P=$SRC/tests/profiles
T=$(mktemp -d "${TMPDIR:-/tmp}/npl_advise.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
# "pattern policy next_touch stored" of each array, from --json
rows() {
    "$N" advise --json "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for a in d["arrays"]:
    print(a["pattern"], a["policy"], ",".join(str(p) for p in a["next_touch_phases"]) or "-",
          "stored" if a["stored"] else "new")'
}
check "blocked" "blocked bind_block:threads=4 - new" "$(rows $P/blocked.json)"
check "cyclic(2 pages)" "cyclic bind_block:pages=2,threads=4 - new" "$(rows $P/cyclic.json)"
check "serial" "serial bind_all:0 - new" "$(rows $P/serial.json)"
check "shared read" "shared-read-mostly cyclic - new" "$(rows $P/shared_read.json)"
check "shared written" "shared-written cyclic - new" "$(rows $P/shared_written.json)"
check "irregular" "irregular explicit - new" "$(rows $P/irregular.json)"
check "too few samples" "too-few-samples first_touch - new" "$(rows $P/too_few.json)"
check "phase change" "phase-changing bind_block:threads=4 1,2 new" "$(rows $P/phase_changing.json)"
check "several arrays" "blocked bind_block:threads=4 - new
shared-read-mostly cyclic - new
serial bind_all:0 - new
too-few-samples first_touch - new" "$(rows $P/multi.json)"
check "stored advice shown as it is" "cyclic cyclic_block:4 - stored
irregular explicit 1 stored" "$(rows $P/advised.json)"
# a profile of mg_plain in the 4-node guest, its advice stored by numaplace profile: grid levels
# of one call site follow its finest level's map (docs/PROFILE.md §7, rule 6). Stored advice is shown
# as it is (the rule ran before it was written: run again, it freed the profile's own maps)
"$N" advise --json "$P/guest_mg_stored.json" >$T/mg.json 2>$T/mg.err
check "stored follower advice: exit 0, nothing on stderr" "0 0" "$? $(wc -c <$T/mg.err)"
check "stored follower advice: every reason and map as stored" "9 9" "$(python3 - "$P/guest_mg_stored.json" $T/mg.json <<'PY'
import json, sys
stored = [a.get("advice") for a in json.load(open(sys.argv[1]))["arrays"]]
shown = json.load(open(sys.argv[2]))["arrays"]
same = sum(1 for s, a in zip(stored, shown)
           if a["stored"] and a["reason"] == s["reason"] and a["policy"] == s["policy"])
print(len(shown), same)
PY
)"
"$N" advise --write $T/mg_w.json "$P/guest_mg_stored.json" >/dev/null 2>&1
check "stored follower advice: advise --write, exit 0, the same file" "0 $(cksum <"$P/guest_mg_stored.json" | cut -d' ' -f1)" "$? $(cksum <$T/mg_w.json | cut -d' ' -f1)"
# exact profiles of the locality harness's programs in the 4-node guest (bench/auto/run_auto
# --exact-profiles: 8 threads pinned compact, 2 per node): the advice run there reached the per-array
# oracle (docs/RESULTS.md, "The locality harness")
check "guest auto_multi" "blocked bind_block:threads=8 - new
cyclic bind_block:pages=4,threads=8 - new
shared-read-mostly cyclic - new
blocked bind_block:threads=8 - new" "$(rows $P/guest_auto_multi.json)"
check "guest auto_phase" "phase-changing bind_block:threads=8 1,2 new" "$(rows $P/guest_auto_phase.json)"
# guest_advice's cases a, d and e in one run of 8 passes (4-node guest): three parallel sections,
# each followed by the main thread alone (one phase for all three: the sampler cannot tell them
# apart). That phase was taken for the steady state of every array it touched: a's owned slices
# advised `serial bind_all:0` in 17 of 20 profiles. To each array it is a pass of its own: a's
# slices `explicit` predicted 1.00 (in 20 of 20), d's table `cyclic`.
for i in 1 4; do
    check "guest three sections ($i): a's owned slices by their owners, d's table spread" \
        "explicit 1 cyclic" "$("$N" advise --json "$P/guest_three_sections_$i.json" | python3 -c '
import json, sys
a = json.load(sys.stdin)["arrays"]
print(a[0]["policy"], int(a[0]["local_policy"] >= 0.95), a[1]["policy"])')"
done
# guest_advice's case e in the 4-node guest (worker t writes slice t, then slice 3 - t: each
# chunk's two owners serve half of it under any map that gives it one of them; exact 0.500):
# four profiles whose whole windows, dealt into two folds, predicted 0.44, 0.42, 0.46 and advised
# the spread (0.25). Each half owned by its threads, the owners changed once: the map of one
# half's owners (every slice whole on the node of one half's owner), predicted over the whole run
# as its samples weigh the halves (0.51-0.58: the halves held 42-51% of the samples), the exact
# 0.50 within its stated +/- (at most 0.15)
for i in 1 2 3 5; do
    check "guest owners change half-way ($i): one half's owners' map, the exact 0.50 within its +/-" \
        "explicit 1 1" "$("$N" advise --json "$P/guest_owners_change_$i.json" | python3 -c '
import json, re, sys
a = json.load(sys.stdin)["arrays"][0]
m, n = a["chunk_nodes"], len(a["chunk_nodes"])
side = all(m[k] == m[k // (n // 4) * (n // 4)] for k in range(n)) and \
    ([m[s * n // 4] for s in range(4)] in ([0, 1, 2, 3], [3, 2, 1, 0]))
err = float(re.search(r"predicted \+/- ([0-9.]+)", a["reason"]).group(1))
print(a["policy"], int(side), int(abs(a["local_policy"] - 0.5) <= err <= 0.15))')"
done
# the prediction's +/- in --json (local_err) is the reason's; null for stored advice written
# before the field (advice.local.err) and where not estimated (next-touch's phases)
check "local_err: the reason's +/-, null for stored advice and for next-touch's phases" "1 None None" \
    "$("$N" advise --json "$P/guest_owners_change_1.json" | python3 -c '
import json, re, sys
a = json.load(sys.stdin)["arrays"][0]
print(int("%.2f" % a["local_err"] == re.search(r"predicted \+/- ([0-9.]+)", a["reason"]).group(1)))') $(
    "$N" advise --json "$P/advised.json" | python3 -c '
import json, sys
print(json.load(sys.stdin)["arrays"][0]["local_err"])') $("$N" advise --json "$P/guest_turns_phase.json" |
    python3 -c '
import json, sys
print(json.load(sys.stdin)["arrays"][0]["local_err"])')"
# contract_calls' 2 MiB array in the 4-node guest (read by halves in one region, by alternate
# pages in another; the main thread also ran the serial parts: 1.9 s while pages were armed, the
# other thread 0.6 s): weighed by the exposures of each phase, phase-changing; by the whole run's
# (run.phase_exposure taken out), the main thread's samples weighed less, one node map fitted
# 0.96 and next-touch no longer beat it (irregular explicit: 4 profiles of 14)
check "exposures by phase: phase-changing, next-touch at both regions" \
    "phase-changing bind_block:threads=2,pin=scatter 1,3 new" "$(rows $P/contract_phase_exposure.json)"
# (its threads ran together in 2 of 12 rounds: weighed alike in each phase, which needs neither;
# the rounds made together here, so that the exposures are what weighs)
python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); del j["run"]["phase_exposure"]
c = j["sampling"]["concurrency"]; c["together"] = c["rounds"]; json.dump(j, open(sys.argv[2], "w"))' \
    "$P/contract_phase_exposure.json" "$T/whole_run.json"
check "the same with whole-run exposures only: irregular" "irregular explicit - new" \
    "$(rows $T/whole_run.json)"
python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); del j["run"]["phase_exposure"]; json.dump(j, open(sys.argv[2], "w"))' \
    "$P/contract_phase_exposure.json" "$T/whole_run_turns.json"
check "whole-run exposures only, its threads taking turns: phase-changing" \
    "phase-changing bind_block:threads=2,pin=scatter 1,3 new" "$(rows $T/whole_run_turns.json)"
# contract_calls' 2 MiB array in a 4-node guest whose vCPUs took turns in one host thread (the
# threads ran together in 3 of 11 sampler rounds): region B's samples 999 : 290 for the thread
# whose vCPU ran first, and one node map fitted 0.92. Each thread that ran in a phase weighed
# alike there (its samples of every array): phase-changing, said in the profile's warning and the
# array's reason; the same profile with its rounds together: irregular
check "threads that took turns: each weighed alike in a phase, phase-changing" \
    "phase-changing bind_block:threads=2,pin=scatter 1,3 new" "$(rows $P/guest_turns_phase.json)"
check "threads that took turns: said in the reason and the warning" "1 1" \
    "$("$N" advise --json "$P/guest_turns_phase.json" | python3 -c '
import json, sys
print(int("the threads took turns" in json.load(sys.stdin)["arrays"][0]["reason"]))') $("$N" advise \
    "$P/guest_turns_phase.json" 2>&1 | grep -c 'each thread that ran in a phase was weighed alike')"
python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); c = j["sampling"]["concurrency"]; c["together"] = c["rounds"]
json.dump(j, open(sys.argv[2], "w"))' "$P/guest_turns_phase.json" "$T/together.json"
check "the same profile, its threads together: irregular" "irregular explicit - new" \
    "$(rows $T/together.json)"
# guest_advice's table (every worker reads all of it) in the 4-node guest: in the window of the
# workers' passes worker 3 got 147 of 162 samples, the others 13, 1 and 1, though all four ran
# 0.13-0.19 s there and the three were seen on no other array: the readers the first toucher
# hid, weighed up to worker 3's rate, make it shared (spread, predicted within 0.05 of the exact
# 0.25); without the exposures by phase it was serial, bind_all on worker 3's node
check "hidden readers: the table spread, predicted within 0.05 of 0.25" "cyclic 1" \
    "$("$N" advise --json "$P/guest_table_masked.json" | python3 -c '
import json, sys
a = json.load(sys.stdin)["arrays"][0]
print(a["policy"], int(abs(a["local_policy"] - 0.25) <= 0.05))')"
python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); del j["run"]["phase_exposure"]; json.dump(j, open(sys.argv[2], "w"))' \
    "$P/guest_table_masked.json" "$T/masked_whole_run.json"
check "hidden readers: without the exposures by phase, serial" "serial bind_all:2 - new" \
    "$(rows $T/masked_whole_run.json)"
# the same table as if every sample were worker 3's (tests/profiles/guest_table_unseen.json: the
# masked profile with every other sample taken out: the shape of a clean-clone run's profile in
# which one worker took all 256 samples): the three others ran as long with no sample of any
# array, their nodes count as readers: spread, predicted 0.25 (each node's share of the pages),
# said; as it was before (bind_all on worker 3's node) with the whole-run exposures only (no
# thread is then known to have run in the window)
check "unseen readers: the table spread, predicted within 0.05 of 0.25, said" "cyclic 1 1" \
    "$("$N" advise --json "$P/guest_table_unseen.json" | python3 -c '
import json, sys
a = json.load(sys.stdin)["arrays"][0]
print(a["policy"], int(abs(a["local_policy"] - 0.25) <= 0.05),
      int("their 3 node(s) counted among its accessing nodes" in a["reason"]))')"
python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); del j["run"]["phase_exposure"]; json.dump(j, open(sys.argv[2], "w"))' \
    "$P/guest_table_unseen.json" "$T/unseen_whole_run.json"
check "unseen readers: without the exposures by phase, serial" "serial bind_all:2 - new" \
    "$(rows $T/unseen_whole_run.json)"
# rank 0's table in guest_bind_mpi's MPI+OpenMP job (4-node guest), read whole by its 4 threads on
# nodes 0 and 1, its fault samples moved to node 1's threads until they held 0.88 (one boot of
# five had 0.84 and the table was weighted 0.844 on one node): both nodes sampled it across its
# length, so the skew is the first toucher's: spread over the two, predicted within 0.05 of the
# exact 0.50, said; the same samples taken by perf (accesses, not first touches): node 1
check "readers across: the rank's table spread, predicted 0.50, said" "shared-read-mostly cyclic@0,1 1 1" \
    "$("$N" advise --json "$P/guest_mpi_table_skewed.json" | python3 -c '
import json, sys
a = json.load(sys.stdin)["arrays"][1]
print(a["pattern"], a["policy"], int(abs(a["local_policy"] - 0.50) <= 0.05),
      int("read it across its length" in a["reason"]))')"
python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); j["sampling"]["backend"] = "perf"; json.dump(j, open(sys.argv[2], "w"))' \
    "$P/guest_mpi_table_skewed.json" "$T/mpi_table_perf.json"
check "readers across: the same samples from perf, node 1" "irregular bind_all:1 - new" \
    "$(rows $T/mpi_table_perf.json | sed -n 2p)"
# the table: one row per array after the two header lines, the site as file:line or object+offset
out=$("$N" advise "$P/multi.json"); rc=$?
check "table: exit 0" 0 $rc
check "table: 2 header lines + 4 rows" 6 "$(printf '%s\n' "$out" | wc -l | tr -d ' ')"
check "table: sites" "solver.c:40 solver.c:41 kernels+0x3000 solver.c:60" \
    "$(printf '%s\n' "$out" | tail -n 4 | awk '{printf "%s%s", (NR > 1 ? " " : ""), $1}')"
check "table: sizes" "64 KiB" "$(printf '%s\n' "$out" | sed -n 3p | awk '{print $2, $3}')"
check "table: replicate said" 1 "$(printf '%s\n' "$out" | grep -c 'cyclic (replicate)')"
check "table: the reason names the numbers" 1 \
    "$(printf '%s\n' "$out" | grep -c 'bind_block:threads=4 predicts 0.99 local, first touch 0.99 (164 samples)')"
check "table: next-touch phases" 1 "$("$N" advise "$P/phase_changing.json" | grep -c '+next-touch@1,2')"
check "table: stored marked" 2 "$("$N" advise "$P/advised.json" | grep -c '(stored)')"
check "--verbose lists the candidates" 1 \
    "$("$N" advise -v "$P/irregular.json" | grep -c 'explicit .*(this input size only)')"
# --write: the profile with the advice stored in it; read again, every array is stored, unchanged
"$N" advise --write "$T/w.json" "$P/multi.json" >/dev/null; check "--write: exit 0" 0 $?
check "--write: stored, same advice" "$(rows $P/multi.json | sed 's/ new$/ stored/')" "$(rows $T/w.json)"
cp "$P/blocked.json" "$T/in_place.json"
"$N" advise --write "$T/in_place.json" "$T/in_place.json" >/dev/null; check "--write over FILE" "blocked bind_block:threads=4 - stored" "$(rows $T/in_place.json)"
"$N" advise --write /nonexistent/dir/p.json "$P/blocked.json" >/dev/null 2>&1; check "--write to a bad place: 1" 1 $?
# --html: one self-contained page; one chart group per array carrying advise --json's exact
# predicted fractions (bar widths from them, the best-placement bar where it differs at 3
# decimals), every string from the profile escaped (a hostile site name and program path)
python3 - "$P/blocked.json" "$T/hostile.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["program"]["path"] = "/tmp/<b>prog&amp;</b>"
a = d["arrays"][0]
a["site"]["object"], a["site"]["where"] = "/opt/<script>alert(1)&x\"'.so", None
b = json.loads(json.dumps(a))
b["site"]["where"], b["site"]["ordinal"] = "</script><img src=x onerror=alert(1)>&amp;.c:7", 1
d["arrays"].append(b)
json.dump(d, open(sys.argv[2], "w"))
PY
# "N groups, E errors" for an --html page against --json of the same profile (error lines first)
html_vs_json() {
    python3 - "$1" "$2" <<'PY'
import json, sys, html.parser, re, xml.etree.ElementTree as ET
page, want = open(sys.argv[1], encoding="utf-8").read(), json.load(open(sys.argv[2]))["arrays"]
class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.groups, self.cur, self.tags, self.cells, self.td = [], None, set(), [], None
        self.refs = []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs); self.tags.add(tag)
        self.refs += [f"{tag} {k}={v}" for k, v in attrs if k in ("src", "href") or "url(" in (v or "")]
        if tag == "g" and a.get("class") == "npl-array":
            self.cur = {"attrs": a, "bars": {}}
        elif tag == "rect" and self.cur is not None and "bar" in a.get("class", "").split():
            self.cur["bars"][a["class"].split()[1]] = a["width"]
        elif tag == "td":
            self.td = ""
    def handle_endtag(self, tag):
        if tag == "g" and self.cur is not None:
            self.groups.append(self.cur); self.cur = None
        elif tag == "td" and self.td is not None:
            self.cells.append(self.td); self.td = None
    def handle_data(self, data):
        if self.td is not None:
            self.td += data
p = P(); p.feed(page); p.close()
err = []
if len(p.groups) != len(want):
    err.append(f"{len(p.groups)} groups for {len(want)} arrays")
for i, (g, a) in enumerate(zip(p.groups, want)):
    at, bars = g["attrs"], g["bars"]
    if at.get("data-index") != str(i) or at.get("data-site") != a["label"]:
        err.append(f"array {i}: site {at.get('data-site')!r}, want {a['label']!r}")
    exp = {"bar-policy": a["local_policy"], "bar-first-touch": a["local_first_touch"], "bar-best": a["local_best"]}
    for name, key in (("policy", "bar-policy"), ("first-touch", "bar-first-touch"), ("best", "bar-best")):
        got = at.get("data-local-" + name)
        if (None if got is None else float(got)) != exp[key]:
            err.append(f"array {i}: data-local-{name} {got}, want {exp[key]}")
    if f"{a['local_best']:.3f}" == f"{a['local_policy']:.3f}":
        exp.pop("bar-best")
    exp = {k: "%.1f" % (v * 360) for k, v in exp.items() if v is not None}
    if bars != exp:
        err.append(f"array {i}: bars {bars}, want {exp}")
    if a["label"] not in p.cells:
        err.append(f"array {i}: no table cell {a['label']!r}")
svg = re.findall(r"<svg.*?</svg>", page, re.S)
try:
    for s in svg:
        ET.fromstring(s)
except ET.ParseError as e:
    err.append(f"svg not well-formed: {e}")
if len(svg) != 1:
    err.append(f"{len(svg)} svg elements")
for t in ("script", "link", "img", "iframe", "object", "style", "b"):
    if t in p.tags:
        err.append(f"a <{t}> element")
if p.refs:
    err.append(f"an external reference: {p.refs[0]}")
for e in err:
    print("ERROR", e)
print(f"{len(p.groups)} groups, {len(err)} errors")
PY
}
for f in multi advised guest_auto_multi "$T/hostile"; do
    case $f in /*) pf=$f.json ;; *) pf=$P/$f.json ;; esac
    b=$(basename "$f")
    "$N" advise --json "$pf" >"$T/$b.adv.json"
    "$N" advise --html "$T/$b.html" "$pf" >"$T/$b.out" 2>"$T/$b.err"; rc=$?
    check "--html $b: exit 0, nothing on stderr" "0 0" "$rc $(wc -c <"$T/$b.err" | tr -d ' ')"
    check "--html $b: the table on stdout as without --html" "$("$N" advise "$pf")" "$(cat "$T/$b.out")"
    n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["arrays"]))' "$T/$b.adv.json")
    check "--html $b: one chart group per array, the exact fractions" "$n groups, 0 errors" \
        "$(html_vs_json "$T/$b.html" "$T/$b.adv.json")"
done
# advised.json: a best placement above the advice (3 bars) and an unknown first touch (no bar)
check "--html advised: best bar, first-touch bar" "1 1" \
    "$(grep -c 'class="bar bar-best"' "$T/advised.html") $(grep -c 'class="bar bar-first-touch"' "$T/advised.html")"
h=$T/hostile.html
check "--html hostile: no raw markup from the profile" 0 "$(grep -ciE '<(script|img|b>|/b>)' "$h")"
# each label in the group's data-site and title, the chart (the second one cut) and the table
check "--html hostile: escaped, site and program" "4 3 1" \
    "$(grep -c '&lt;script&gt;alert(1)&amp;x&quot;&#39;.so+0x1234' "$h") $(grep -c '&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&amp;amp;.c:7' "$h") $(grep -c '/tmp/&lt;b&gt;prog&amp;amp;&lt;/b&gt;' "$h")"
# unwritable places: exit 1, one line naming the file and why; nothing left behind
"$N" advise --html /nonexistent/dir/a.html "$P/blocked.json" >/dev/null 2>"$T/err"
check "--html to a missing directory: 1" 1 $?
check "--html to a missing directory: message" "numaplace advise: cannot write /nonexistent/dir/a.html: its directory does not exist" "$(cat "$T/err")"
ln -s "$T/target.html" "$T/link.html"
"$N" advise --html "$T/link.html" "$P/blocked.json" >/dev/null 2>"$T/err"
check "--html through a symbolic link: 1, said, target not made" "1 1 no" \
    "$? $(grep -c 'cannot write .*link.html: it is a symbolic link' "$T/err") $([ -e "$T/target.html" ] && echo yes || echo no)"
"$N" advise --html "$T" "$P/blocked.json" >/dev/null 2>"$T/err"
check "--html to a directory: 1" "1 1" "$? $(grep -c "cannot write $T: it is a directory" "$T/err")"
"$N" advise --html /dev/full "$P/blocked.json" >/dev/null 2>"$T/err"
# a character device is written in place, never replaced (cli_write_out): /dev/full says ENOSPC
check "--html to a device: 1" "1 1" "$? $(grep -c 'error writing /dev/full: No space left on device' "$T/err")"
"$N" advise --html >/dev/null 2>&1; check "--html without a value: 2" 2 $?
# headless Chromium draws the chart: every array's group and bar has a width on the page
B=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$B" ]; then
    skip chromium "--html rendering: chromium is not installed (scripts/deps.sh)"
else
    cp "$T/advised.html" "$T/draw.html"
    cat >>"$T/draw.html" <<'JS'
<script>window.addEventListener("load", () => { const p = document.createElement("p");
  p.id = "drawn"; p.textContent = "DRAWN " + [...document.querySelectorAll("g.npl-array")].map(g =>
  g.getBBox().width > 0 ? g.querySelectorAll("rect.bar").length + ":" + [...g.querySelectorAll("rect.bar")].filter(r => r.getBBox().width > 0).length : "0").join(",");
  document.body.appendChild(p); });</script>
JS
    timeout 120 "$B" --headless --no-sandbox --disable-gpu --virtual-time-budget=5000 \
        --dump-dom "file://$T/draw.html" >"$T/dom" 2>/dev/null
    # advised.json: the advice and the best above it (first touch not known); the advice and
    # first touch (the best is the advice)
    check "chromium: the chart drawn (bars per array: drawn)" "DRAWN 2:2,2:2" "$(grep -o 'DRAWN [0-9][0-9:,]*' "$T/dom")"
fi
# bad profiles: exit 2, one line on stderr naming the file and the problem, nothing on stdout
for f in "$P"/bad/*; do
    b=$(basename "$f")
    "$N" advise "$f" >"$T/out" 2>"$T/err"; rc=$?
    check "bad $b: exit 2" 2 $rc
    check "bad $b: one line on stderr" 1 "$(wc -l <"$T/err" | tr -d ' ')"
    check "bad $b: names the file" 1 "$(grep -c "$b" "$T/err")"
    check "bad $b: nothing on stdout" 0 "$(wc -c <"$T/out" | tr -d ' ')"
    "$N" advise --json "$f" >"$T/out" 2>/dev/null; check "bad $b --json: exit 2, no output" "2 0" "$? $(wc -c <"$T/out" | tr -d ' ')"
done
check "foreign: said so" 1 "$("$N" advise "$P/bad/foreign_format.json" 2>&1 | grep -c 'not a numaplace profile: format "chrome-trace"')"
check "version 2: said so" 1 "$("$N" advise "$P/bad/version_2.json" 2>&1 | grep -c 'profile version 2 is not supported')"
check "truncated: said so" 1 "$("$N" advise "$P/bad/truncated.json" 2>&1 | grep -c 'truncated?')"
check "NaN: names the member" 1 "$("$N" advise "$P/bad/nan.json" 2>&1 | grep -c 'sampling.rate')"
"$N" advise /nonexistent/p.json >/dev/null 2>&1; check "missing file: 2" 2 $?
"$N" advise "$P" >/dev/null 2>&1; check "a directory: 2" 2 $?
"$N" advise >/dev/null 2>&1; check "no profile: 2" 2 $?
# two profiles of one program are merged by site (tests/cli/test_profile_mpi.sh); --json takes one
"$N" advise "$P/blocked.json" "$P/serial.json" >"$T/out" 2>&1; check "two profiles of one program: merged" "0 1" "$? $(grep -c '^2 profiles of /usr/local/bin/kernels, merged by site' "$T/out")"
"$N" advise --json "$P/blocked.json" "$P/serial.json" >/dev/null 2>&1; check "two profiles with --json: 2" 2 $?
"$N" advise --frob "$P/blocked.json" >/dev/null 2>&1; check "unknown option: 2" 2 $?
"$N" advise --help >/dev/null; check "--help: 0" 0 $?
check "help lists advise" 1 "$("$N" --help | grep -c '^  advise FILE')"
# schemas: the profiles validate, the bad ones the schema can see do not, --json validates
if python3 -c 'import jsonschema' 2>/dev/null; then
    # one python for all: each profile validates, so does advise --json of it; the bad profiles
    # the schema can see do not
    for f in "$P"/*.json "$T/w.json"; do "$N" advise --json "$f" >"$T/$(basename "$f").advise"; done
    python3 - "$SRC/docs/schema" "$T" "$P" "$P"/*.json "$T/w.json" >"$T/schemas" 2>&1 <<'PY'
import json, os, sys, jsonschema
sd, tmp, pdir, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
ps, ad = (json.load(open(os.path.join(sd, n + ".schema.json"))) for n in ("profile", "advise"))
for s in (ps, ad):
    jsonschema.Draft202012Validator.check_schema(s)
pv, av = jsonschema.Draft202012Validator(ps), jsonschema.Draft202012Validator(ad)
for f in files:
    b = os.path.basename(f)
    e = list(pv.iter_errors(json.load(open(f)))) + list(av.iter_errors(json.load(open(os.path.join(tmp, b + ".advise")))))
    print("valid" if not e else "INVALID: " + e[0].message[:200], b)
for b in ("foreign_format", "version_2", "missing_run", "threads_string", "absurd_nchunks", "unknown_member"):
    e = list(pv.iter_errors(json.load(open(os.path.join(pdir, "bad", b + ".json")))))
    print("rejected" if e else "ACCEPTED", b)
PY
    check "schemas: ran" 0 $?
    while read -r verdict name; do
        case $verdict in
        valid|rejected) pass=$((pass + 1)) ;;
        *) fail=$((fail + 1)); echo "FAIL schema: $verdict $name" ;;
        esac
    done <"$T/schemas"
    check "schemas: every file checked" $(( $(ls "$P"/*.json | wc -l) + 1 + 6 )) "$(wc -l <"$T/schemas" | tr -d ' ')"
    for s in profile advise; do # every property is described
        python3 - "$SRC/docs/schema/$s.schema.json" <<'PY'; check "$s schema: every property described" 0 $?
import json, sys
def walk(x, path):
    if isinstance(x, dict):
        for k, v in x.get("properties", {}).items():
            assert "description" in v, f"{path}.{k} has no description"
        for k, v in x.items():
            walk(v, path + "/" + k)
    elif isinstance(x, list):
        for v in x:
            walk(v, path)
walk(json.load(open(sys.argv[1])), "")
PY
    done
else
    skip jsonschema "schemas: python3-jsonschema is not installed (scripts/deps.sh)"
fi
# the man page
f=$SRC/docs/man/numaplace-advise.1
check "man page exists" 1 "$([ -f "$f" ] && echo 1 || echo 0)"
if ! command -v groff >/dev/null 2>&1; then
    skip groff "man page rendering: groff is not installed"
elif [ -f "$f" ]; then
    check "man page renders without warnings" "" "$(groff -man -Tutf8 -ww -z "$f" 2>&1)"
fi
summary test_advise
