#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/real/summary.py OUTDIR - the table of bench/real/run_real from the guest's logs.

OUTDIR/progs.txt names the programs ("NAME|SIZE-A|SIZE-B|CMD-A|CMD-B"); OUTDIR/logs/ holds
NAME.{plainA,plainB,profile,runA,runB,advise}.{out,err,rc} and NAME.json (the profile), and with
NPL_REAL_LOCALITY=1 NAME.{loc_cyclic,loc_node0,loc_advised}.*: the measured locality of each
placement (profile's last line), a table of its own and "locality" in summary.json. For each
run under numaplace: its exit status and its stdout without timing lines must equal the plain
run's at the same size. Writes OUTDIR/summary.txt and OUTDIR/summary.json; exit status 1 when a
run under numaplace changed a program's status or output (or did not run), else 0. Lines in which
the runs without a profile at size A disagree among themselves (plainA, plainA2, pinA: OpenMP
reductions summed in arrival order) are reported, not counted as a change.
"""
import json
import os
import re
import sys

# lines that hold times or rates (they differ from run to run); everything else must be equal
TIMING = re.compile(r"(?i)time|seconds|mop/s|compile date|mb/s|rate|runtime|lookups/s|clock|"
                    r"ticks|granularity|precision|microseconds|^\s*(copy|scale|add|triad):")
VERIFY = re.compile(r"(?i)verification|validates|checksum|zeta is|l2 norm|error is|^\s*T\s*=")
MATCHED = re.compile(r"profile (\S+): (\d+) of (\d+) arrays matched again \((?:([\d.]+)% of the "
                     r"profiled bytes|the profile has no array)\); (\d+) blocks \((\d+) bytes\) not "
                     r"in the profile")


def read(logs, name, what, ext):
    try:
        with open(os.path.join(logs, "%s.%s.%s" % (name, what, ext)), errors="replace") as f:
            return f.read()
    except OSError:
        return None


def stable(out):
    return [l.rstrip() for l in (out or "").splitlines() if l.strip() and not TIMING.search(l)]


def compare(logs, name, plain, run, loose=()):
    """(same, why) for one run against the plain run at its size: same is "yes", "no", or
    "yes*" when the stdouts differ only in lines that also differ between two runs without a
    profile (loose: the line numbers where plainA, plainA2 and pinA disagree)"""
    prc, rrc = read(logs, name, plain, "rc"), read(logs, name, run, "rc")
    if rrc is None:
        return "no", "%s did not run" % run
    if rrc.strip() in ("125", "2") and "is a profile of" in (read(logs, name, run, "err") or ""):
        return "refused", "not started: the profile is of another binary (build-id)"
    if prc.strip() != rrc.strip():
        return "no", "exit status %s, plain %s" % (rrc.strip(), prc.strip())
    a, b = stable(read(logs, name, plain, "out")), stable(read(logs, name, run, "out"))
    if a == b:
        return "yes", "status %s, %d lines equal" % (rrc.strip(), len(a))
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if all(i in loose for i in diff):
            return "yes*", "differs only where runs without a profile differ: " + " | ".join(
                b[i].strip() for i in diff[:2])
    diff = [l for l in b if l not in a][:2] + ["(plain) " + l for l in a if l not in b][:2]
    return "no", "stdout differs: " + " | ".join(diff)


def loose_lines(logs, name):
    """line numbers where the runs without a profile (plainA, plainA2, pinA) disagree"""
    outs = [stable(read(logs, name, w, "out")) for w in ("plainA", "plainA2", "pinA")
            if read(logs, name, w, "out") is not None]
    if len(outs) < 2 or len(set(len(o) for o in outs)) != 1:
        return set()
    return {i for i in range(len(outs[0])) if len(set(o[i] for o in outs)) > 1}


def matched(logs, name, run):
    err = read(logs, name, run, "err") or ""
    m = MATCHED.search(err)
    if m:
        pct = float(m.group(4)) if m.group(4) else None  # None: the profile has no array
        return {"arrays": int(m.group(2)), "of": int(m.group(3)), "pct_bytes": pct,
                "unmatched_blocks": int(m.group(5)), "unmatched_bytes": int(m.group(6))}
    first = [l for l in err.splitlines() if l.startswith("numaplace")][:1]
    return {"none": first[0] if first else "no matched-again line"}


MEASURED = re.compile(r"sampled accesses on the accessing thread's node: (?:[\d.]+%|n/a) "
                      r"\((\d+) of (\d+) samples; (\d+) unknown\)")
# the placements the locality step (NPL_REAL_LOCALITY=1) measures, in table order: label, run
LOCALITY = (("first touch", "profile"), ("cyclic", "loc_cyclic"), ("bind_all:0", "loc_node0"),
            ("advised", "loc_advised"))


def measured(logs, name, run):
    """the measured locality of one `numaplace profile` run: {"local", "known", "unknown",
    "fraction"}, or {"none": why}"""
    rc, err = read(logs, name, run, "rc"), read(logs, name, run, "err")
    if rc is None:
        return {"none": "not run"}
    m = MEASURED.search(err or "")
    if not m:
        first = [l for l in (err or "").splitlines() if l.startswith("numaplace")][:1]
        return {"none": "refused (status %s): " % rc.strip() + first[0]
                if rc.strip() in ("125", "2") and first  # 125: profile's own failure (2 before)
                else "no measured line (status %s)" % rc.strip()}
    l, t, u = (int(g) for g in m.groups())
    return {"local": l, "known": t, "unknown": u, "fraction": l / t if t else None}


# the profile each locality placement writes (first touch: the profile of step 2)
LOCALITY_JSON = {"profile": "", "loc_cyclic": ".cyclic", "loc_node0": ".node0",
                 "loc_advised": ".advised"}


def strata(path):
    """{stratum: [local, remote]} of a profile whose sample rows carry their measured counts:
    a region phase is its code address (object name, offset), the serial windows one stratum
    ("serial"); None when the profile is missing or its rows have no counts"""
    try:
        with open(path) as f:
            p = json.load(f)
    except (OSError, ValueError):
        return None
    key = {}
    for ph in p.get("phases", []):
        site = ph.get("site")
        key[ph["id"]] = ("%s+%#x" % (os.path.basename(site["object"]), site["offset"])
                         if ph["kind"] == "region" and site else "serial")
    out, counted = {}, False
    for a in p.get("arrays", []):
        for row in a.get("samples", []):
            if len(row) < 7:
                return None
            counted = True
            c = out.setdefault(key.get(row[0], "serial"), [0, 0])
            c[0] += row[5]
            c[1] += row[6]
    return out if counted else None


def phase_matched(logs, name):
    """each placement's local fraction per phase, weighed by the phase's share of the known
    samples of all the placements together: {label: fraction or None}, and the weights"""
    per = {label: strata(os.path.join(logs, name + LOCALITY_JSON[run] + ".json"))
           for label, run in LOCALITY}
    pooled = {}
    for s in per.values():
        for k, (l, r) in (s or {}).items():
            pooled[k] = pooled.get(k, 0) + l + r
    total = sum(pooled.values())
    res = {}
    for label, s in per.items():
        if not s or not total:
            res[label] = None
            continue
        num = den = 0.0
        for k, w in pooled.items():
            l, r = s.get(k, (0, 0))
            if l + r:
                num += w / total * l / (l + r)
                den += w / total
        res[label] = num / den if den else None
    return res, {k: w / total for k, w in sorted(pooled.items())} if total else {}


def locality_cell(m):
    if "none" in m:
        return "refused" if m["none"].startswith("refused") else "-"
    if m["fraction"] is None:
        return "n/a"
    return "%.1f%% (%d)" % (100 * m["fraction"], m["known"])


def advice(path):
    try:
        with open(path) as f:
            p = json.load(f)
    except (OSError, ValueError) as e:
        return None, "profile unreadable: %s" % e
    rows = []
    for a in p.get("arrays", []):
        s = a["site"]
        label = s.get("symbol") or s.get("where") or "%s+%#x#%d" % (os.path.basename(s["object"]),
                                                                    s["offset"], s["ordinal"])
        adv = a.get("advice") or {}
        rows.append({"array": label, "kind": s["kind"], "bytes": a["bytes"],
                     "policy": adv.get("policy", "-"), "pattern": adv.get("pattern", "-")})
    return rows, "%d arrays" % len(rows)


def main():
    out = sys.argv[1]
    logs = os.path.join(out, "logs")
    res, bad, L = [], 0, []
    with open(os.path.join(out, "progs.txt")) as f:
        progs = [l.rstrip("\n").split("|") for l in f if l.strip()]
    hdr = "%-8s %-16s %-16s %-5s %-9s %-9s %s" % ("program", "profiled at", "run at", "same",
                                                  "arrays", "% bytes", "advised (array: policy)")
    L += [hdr, "-" * len(hdr)]
    for name, a, b, _, _ in progs:
        rows, note = advice(os.path.join(logs, name + ".json"))
        adv = ", ".join("%s: %s" % (r["array"], r["policy"]) for r in rows or []) or note
        loose = loose_lines(logs, name)
        prof_same, prof_why = compare(logs, name, "plainA", "profile", loose)
        r = {"program": name, "size_a": a, "size_b": b, "profile": {"same": prof_same,
             "why": prof_why}, "advice": rows, "runs": {}}
        bad += prof_same == "no"
        r["unstable_lines"] = sorted(loose)
        L.append("%-8s %-16s %-16s %-5s %-9s %-9s %s" % (name, a, "(profile run)", prof_same, "-",
                 "-", adv + ("" if prof_same == "yes" else "  [" + prof_why + "]")))
        for run, plain, size in (("runA", "plainA", a), ("runB", "plainB", b)):
            same, why = compare(logs, name, plain, run, loose if run == "runA" else ())
            m = matched(logs, name, run)
            bad += same == "no"
            r["runs"][run] = {"size": size, "same": same, "why": why, "matched": m}
            if "arrays" in m:
                arr, pct = "%d of %d" % (m["arrays"], m["of"]), ("%.1f%%" % m["pct_bytes"]
                                                              if m["pct_bytes"] is not None else "(none)")
            else:
                arr, pct = "-", "-"
            L.append("%-8s %-16s %-16s %-5s %-9s %-9s %s" % (name, a, size, same, arr, pct,
                     why if same != "yes" else ("" if "arrays" in m else m["none"])))
        if any(read(logs, name, run, "rc") is not None for _, run in LOCALITY[1:]):
            r["locality"] = {label: measured(logs, name, run) for label, run in LOCALITY}
            r["locality_phase_matched"], r["locality_phase_weights"] = phase_matched(logs, name)
        res.append(r)
    loc = [r for r in res if "locality" in r]
    if loc:
        L.append("")
        L.append("measured locality (numaplace profile --pin scatter at size A: sampled accesses "
                 "on the accessing thread's node, and how many samples of a known node)")
        hdr = "%-8s" % "program" + "".join(" %-18s" % label for label, _ in LOCALITY)
        L += [hdr, "-" * len(hdr)]
        for r in loc:
            L.append("%-8s" % r["program"] + "".join(
                " %-18s" % locality_cell(r["locality"][label]) for label, _ in LOCALITY))
        pm = [r for r in loc if any(v is not None for v in r["locality_phase_matched"].values())]
        if pm:
            L.append("")
            L.append("phase-matched (each phase's local fraction, weighed by its share of all "
                     "these runs' samples: the same phase mix for every placement)")
            L += [hdr, "-" * len(hdr)]
            for r in pm:
                L.append("%-8s" % r["program"] + "".join(
                    " %-18s" % ("-" if r["locality_phase_matched"][label] is None else
                                "%.1f%%" % (100 * r["locality_phase_matched"][label]))
                    for label, _ in LOCALITY))
    L.append("")
    L.append("same: exit status and stdout (timing lines removed) equal the plain run's at that "
             "size; yes*: they differ only in lines where two plain runs and a pinned run without "
             "a profile also differ (at size A); refused: `run --profile` refuses (exit 2, by design) a "
             "profile of another binary: a size compiled in is another program; arrays / % bytes: the run's 'matched again' line")
    text = "\n".join(L)
    print(text)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(res, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
