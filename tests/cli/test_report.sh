#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# numaplace report: results.json validates against docs/schema/report.schema.json,
# has the host metadata, every repetition with median/min/max, the trust label and the verdict;
# the text puts the verdict first and points at no source file; --reps is checked; the progress
# line stays off when stderr is not a terminal; --json prints the JSON; --profile adds the per-array
# advice (table and chart) that tools/report_plot.py keeps; and headless Chromium
# renders index.html with every image decoded (naturalWidth > 0: the file exists, is a valid
# image and the page references it correctly).
set -u
N=${NUMAPLACE:?set NUMAPLACE to the numaplace binary}
SRC=${SRC:?set SRC to the source tree}
T=$(mktemp -d /tmp/npl_report.XXXXXX)
trap 'rm -rf "$T"' EXIT
TESTS=$(cd "$(dirname "$0")/.." && pwd)
. "$TESTS/check.sh" # check, skip, summary
$N report --reps 0 --no-plots --out "$T/x" >/dev/null 2>&1; check "--reps 0: usage error" 2 $?
$N report --reps 21 --no-plots --out "$T/x" >/dev/null 2>&1; check "--reps 21: usage error" 2 $?
$N report --quick --reps 3 --out "$T/rep" >"$T/out" 2>"$T/err"; rc=$?
check "report --quick --reps 3: 0" 0 $rc
[ $rc -eq 0 ] || tail -5 "$T/err"
check "progress line off when piped (no carriage return, no line)" "0 0" "$(tr -cd '\r' <"$T/err" | wc -c) $(grep -c '^numaplace report: ' "$T/err")"
check "no source file named as the rule" 0 "$(grep -c 'recommend\.h' "$T/out")"
v=$(grep -n '^== verdict' "$T/out" | cut -d: -f1) ms=$(grep -n '^== measurements' "$T/out" | cut -d: -f1)
check "the verdict comes before the measurements" yes "$([ -n "$v" ] && [ -n "$ms" ] && [ "$v" -lt "$ms" ] && echo yes)"
check "one node said once" 1 "$(grep -c 'ONE usable NUMA node' "$T/out")"
# results.json and its page (these checks were test_run.sh's, on a report run of their own)
python3 "$SRC/tools/report_plot.py" "$T/rep" --validate-only >/dev/null 2>&1; check "results.json validates (report_plot.py)" 0 $?
# the headline bandwidth is a median [min-max] like every other figure: the mix of the highest
# median, named (it was the best repetition of any mix)
python3 - "$T/rep/results.json" "$T/out" <<'PY'; check "peak bandwidth: the highest median's mix, median [min-max], in the JSON and the text" 0 $?
import json, sys
f = json.load(open(sys.argv[1]))["factors"]
best = max(f["mixes"], key=lambda x: x["mb_per_s"]["median"])
assert f["peak_read_write"] == best["read_write"] and f["peak_mb_per_s"] == best["mb_per_s"]["median"], f
s = best["mb_per_s"]
line = "peak bandwidth %.0f MB/s [%.0f-%.0f] (" % (s["median"], s["min"], s["max"])
assert line in open(sys.argv[2]).read(), line
# an inversion (a mix that writes faster than read-only, beyond 5% and the ranges) is flagged,
# and only then
ro = f["mixes"][0]["mb_per_s"]
inv = [x["read_write"] for x in f["mixes"][1:]
       if x["mb_per_s"]["median"] > ro["median"] * 1.05 and x["mb_per_s"]["min"] > ro["max"]]
d = json.load(open(sys.argv[1]))
flagged = [w for w in d["trust"]["warnings"] if w.startswith("inversion: read-only bandwidth")]
assert len(flagged) == len(inv), (inv, flagged)
print("INFO peak %s; inversions %s" % (best["read_write"], inv or "none"))
PY
check "18 recommendations" 18 "$(python3 -c "import json; print(len(json.load(open('$T/rep/results.json'))['recommendations']))")"
check "162 results (9 policies x 3 ops x 3 accesses x 2 schedules)" 162 "$(python3 -c "import json; print(len(json.load(open('$T/rep/results.json'))['characterization']['results']))")"
check "index.html" 1 "$(grep -c '<html' "$T/rep/index.html")"
# on one node the policies' plot (162 bars of first-touch variants and noise) is not drawn: the
# page says so, with the largest difference between two policies' medians
one=$(python3 -c "import json; print(int(json.load(open('$T/rep/results.json'))['machine']['node_count'] == 1))")
plots=$((3 - one))
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null || python3 -c 'import matplotlib' 2>/dev/null; then
    check "plots made ($plots: one node $one)" $plots "$(ls "$T"/rep/*.png 2>/dev/null | wc -l)"
    check "index.html shows them" $plots "$(grep -o "<img src='[a-z]*.png'" "$T/rep/index.html" | wc -l)"
    check "one node: the policies' timings not drawn, said once" "$one" \
        "$(grep -c 'their timings are not drawn. The largest difference between two policies' "$T/rep/index.html")"
else
    skip matplotlib "report plots: python3-matplotlib is not installed (scripts/deps.sh)"
fi
# a broken copy (a policy no schema allows) fails validation: status 1, the verdict INVALID and
# the offending field named (any exit 1 was accepted before: an ImportError too)
mkdir -p "$T/badrep"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['recommendations'][0]['policy']='fastest'; json.dump(d, open(sys.argv[2], 'w'))" \
    "$T/rep/results.json" "$T/badrep/results.json"
python3 "$SRC/tools/report_plot.py" "$T/badrep" --validate-only >"$T/bad.out" 2>"$T/bad.err"
check "a broken results.json: status 1, INVALID, the field named" "1 1 yes" \
    "$? $(grep -c 'results.json INVALID' "$T/bad.out") $(grep -q '^report_plot: schema: .*recommendations.*0.*\|fastest' "$T/bad.err" && echo yes)"
# --profile: the advice table after the measurements; in index.html the same section (chart and
# table) as numaplace advise --html draws, once, between the markers tools/report_plot.py keeps
PR=$SRC/tests/profiles/advised.json
# (with --json: results.json on stdout, the text and --progress's lines on stderr; one run checks all)
$N report --quick --reps 1 --progress --profile "$PR" --json --out "$T/adv" >"$T/adv.json" 2>"$T/adv.out"; rc=$?
check "report --profile --json: 0" 0 $rc
[ $rc -eq 0 ] || tail -5 "$T/adv.out"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["schema"]=="numaplace-report/2" and d["reps"]==1; assert d==json.load(open(sys.argv[2]))' \
    "$T/adv.json" "$T/adv/results.json"
check "report --json: results.json on stdout (reps 1)" 0 $?
check "--progress into a log: whole lines, the first at 0%, no carriage return or escape" "yes 0" \
    "$(grep -q '^numaplace report: latency and bandwidth matrix  *0%  ETA --  (0 s)$' "$T/adv.out" && echo yes) $(tr -cd '\r\033' <"$T/adv.out" | wc -c)"
check "report --profile: the advice table after the measurements" "$($N advise "$PR")" \
    "$(sed -n '/^== per-array advice$/,/^wrote /p' "$T/adv.out" | sed '1d;$d' | grep -v '^plots: \|^report_plot: ')"
$N advise --html "$T/adv.html" "$PR" >/dev/null
section() { sed -n '/^<section class="npl-advice">$/,/^<\/section>$/p' "$1"; }
# (the page tools/report_plot.py wrote again where matplotlib is there)
ls "$T"/adv/*.png >/dev/null 2>&1 && echo "INFO report --profile: index.html is report_plot.py's page"
check "report --profile: index.html has advise --html's section" "$(section "$T/adv.html")" "$(section "$T/adv/index.html")"
check "report --profile: one section, between the markers" "1 1 1 1" \
    "$(grep -c '^<section class="npl-advice">$' "$T/adv/index.html") $(grep -c '<g class="npl-array"' "$T/adv/index.html" | awk '{print ($1 == 2)}') $(grep -c '^<!-- numaplace-advice -->$' "$T/adv/index.html") $(grep -c '^<!-- /numaplace-advice -->$' "$T/adv/index.html")"
check "report without --profile: no advice section" 0 "$(grep -c 'npl-advice' "$T/rep/index.html")"
# tools/report_plot.py's page function keeps the section as it is (also without matplotlib)
python3 - "$SRC/tools" "$T/adv" <<'PY'; check "report_plot.py keeps the advice section" 0 $?
import json, os, sys
sys.path.insert(0, sys.argv[1])
import report_plot as rp
index = os.path.join(sys.argv[2], "index.html")
kept = rp.kept_advice(index)
assert kept.startswith(rp.ADVICE_BEGIN) and kept.endswith(rp.ADVICE_END) and "npl-array" in kept, kept[:200]
assert kept in open(index, encoding="utf-8").read()
data = json.load(open(os.path.join(sys.argv[2], "results.json")))
page = rp.page(data, [], kept)
assert page.count(kept) == 1 and page.count(rp.ADVICE_BEGIN) == 1
assert rp.kept_advice(os.path.join(sys.argv[2], "results.json")) == ""
PY
# a bad profile: exit 2 at once, nothing measured, no directory made
$N report --quick --no-plots --profile "$SRC/tests/profiles/bad/nan.json" --out "$T/badp" >"$T/out2" 2>"$T/err2"
check "report --profile BAD: 2, one line, nothing made" "2 1 0 no" \
    "$? $(wc -l <"$T/err2" | tr -d ' ') $(grep -c '^measure:' "$T/err2") $([ -e "$T/badp" ] && echo yes || echo no)"
$N report --quick --no-plots --profile /nonexistent/p.json --out "$T/badp" >/dev/null 2>&1
check "report --profile MISSING: 2" 2 $?
if python3 -c 'import jsonschema' 2>/dev/null; then
    python3 - "$SRC/docs/schema/report.schema.json" "$T/rep/results.json" <<'PY'; check "results.json: schema, metadata, reps, verdict" 0 $?
import json, sys, jsonschema
schema, d = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
jsonschema.Draft202012Validator.check_schema(schema)
jsonschema.Draft202012Validator(schema).validate(d)
h = d["host"]
for k in ("hostname", "cpu_model", "kernel", "thp_mode", "compiler", "compiler_flags"):
    assert h[k], f"host.{k} empty"
assert h["page_size_bytes"] >= 4096
assert d["reps"] == 3 and d["characterization"]["reps"] == 3
stats = [r["seconds"] for r in d["characterization"]["results"]] + [d["factors"]["latency_ns"][0][0],
         d["factors"]["bandwidth_mb_per_s"][0][0]] + [m["mb_per_s"] for m in d["factors"]["mixes"]]
for s in stats:
    assert len(s["reps"]) == 3, s
    assert s["min"] == min(s["reps"]) and s["max"] == max(s["reps"]), s
    assert s["min"] <= s["median"] <= s["max"], s
    assert s["median"] == sorted(s["reps"])[1], s
assert len(d["recommendations"]) == 18
t = d["trust"]
assert t["timings"] == ("emulated" if h["emulated"] else "virtualized" if h["hypervisor_flag"] else "measured")
if d["machine"]["node_count"] == 1:
    assert d["verdict"]["worst_latency_factor"] is None
    assert all(r["policy"] is not None for r in d["recommendations"])
assert "cli/" not in d["verdict"]["rule"] and len(d["verdict"]["rule"]) > 100
# every property of the schema has a description
def walk(x, path):
    if isinstance(x, dict):
        for k, v in x.get("properties", {}).items():
            assert "description" in v, f"{path}.{k} has no description"
        for k, v in x.items():
            walk(v, path + "/" + k)
    elif isinstance(x, list):
        for v in x:
            walk(v, path)
walk(schema, "")
PY
else
    skip jsonschema "schema validation: python3-jsonschema is not installed (scripts/deps.sh)"
fi
# MLC-class figures beside their anchors on this machine (printed, never asserted: timings)
python3 - "$T/rep/results.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["factors"]
s = lambda x: "-" if x is None else f"{x['median']:.1f} [{x['min']:.1f}-{x['max']:.1f}]"
print("INFO idle latency, 2 MiB pages:", s(f["latency_ns"][0][0]), "ns;  4 KiB pages:", s(f["latency_4k_ns"][0][0]), "ns")
print("INFO triad, all CPUs of the node:", s(f["bandwidth_mb_per_s"][0][0]), "MB/s;  1 thread:", s(f["bandwidth_by_threads"][0]["mb_per_s"]), "MB/s")
print("INFO loaded latency:", ", ".join(f"{p['streaming_cpus']} streaming {s(p['ns'])} ns" for p in f["loaded_latency"]))
print("INFO mixes:", ", ".join(f"{m['read_write']} {s(m['mb_per_s'])} MB/s" for m in f["mixes"]), "; peak", round(f["peak_mb_per_s"]), "MB/s")
PY
if command -v likwid-bench >/dev/null 2>&1; then
    sh "$SRC/bench/report_vs_likwid.sh" "$(dirname "$N")" --quick >"$T/likwid" 2>&1
    sed 's/^/INFO /' "$T/likwid"
    check "bench/report_vs_likwid.sh: three mixes beside likwid-bench (and scalar stream)" 4 "$(grep -cE '^(read-only|1:1|2:1) +(load_sse|copy_sse|stream_sse|stream) +[0-9]+ +\[[0-9]+-[0-9]+\] +[0-9]+ +\[[0-9]+-[0-9]+\] +[0-9.]+$' "$T/likwid")"
else
    skip likwid "likwid-bench comparison: likwid is not installed (scripts/deps.sh)"
fi
# headless Chromium: every <img> of index.html decoded
B=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$B" ]; then
    skip chromium "HTML rendering: chromium is not installed (scripts/deps.sh)"
elif ! ls "$T"/rep/*.png >/dev/null 2>&1; then
    skip matplotlib "HTML rendering: no plots (python3 on PATH has no matplotlib; scripts/deps.sh)"
else
    cp "$T/rep/index.html" "$T/rep/check.html"
    cat >>"$T/rep/check.html" <<'JS'
<script>window.addEventListener("load", () => { for (const i of document.images) {
  const p = document.createElement("p"); p.className = "imgcheck";
  p.textContent = "IMG " + i.getAttribute("src") + " " + i.naturalWidth + "x" + i.naturalHeight;
  document.body.appendChild(p); } });</script>
JS
    timeout 120 "$B" --headless --no-sandbox --disable-gpu --allow-file-access-from-files \
        --virtual-time-budget=5000 --dump-dom "file://$T/rep/check.html" >"$T/dom" 2>/dev/null
    check "chromium: $plots images in the page" $plots "$(grep -o 'IMG [a-z]*\.png [0-9]*x[0-9]*' "$T/dom" | wc -l)"
    check "chromium: every image decoded (width and height > 0)" $plots "$(grep -o 'IMG [a-z]*\.png [1-9][0-9]*x[1-9][0-9]*' "$T/dom" | wc -l)"
fi
summary test_report
