#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""report_plot.py DIR [--validate-only] [--title TEXT] - plots and index.html for `numaplace report`.

Reads DIR/results.json, validates it against docs/schema/report.schema.json (python3-jsonschema when
installed, else the small checker below, which understands the subset of JSON Schema the file
uses), and writes DIR/*.png (matplotlib) and DIR/index.html. The per-array advice section that
`numaplace report --profile` put in the index.html it replaces is kept as it is.

Exit status: 0; 1 the JSON does not validate; 2 bad usage or unreadable files;
3 matplotlib is not installed (apt-get install python3-matplotlib).
"""
import html
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# numaplace report --profile writes its per-array advice between these (cli/report/report_parts.h)
ADVICE_BEGIN, ADVICE_END = "<!-- numaplace-advice -->", "<!-- /numaplace-advice -->"
SCHEMA_CANDIDATES = [os.path.join(HERE, "..", "docs", "schema", "report.schema.json"),
                     os.path.join(HERE, "report.schema.json")]


def tiny_validate(inst, schema, root, path="$"):
    """The JSON Schema subset used by docs/schema/report.schema.json: type, const, enum, required,
    properties, additionalProperties=false, items, minItems, minimum, $ref (#/$defs/..), anyOf."""
    if "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/"), ref
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        return tiny_validate(inst, target, root, path)
    errors = []
    if "anyOf" in schema:
        if all(tiny_validate(inst, s, root, path) for s in schema["anyOf"]):
            errors.append(f"{path}: matches none of anyOf")
        return errors
    types = schema.get("type")
    if types is not None:
        types = types if isinstance(types, list) else [types]
        def is_type(t):
            return {"object": isinstance(inst, dict), "array": isinstance(inst, list),
                    "string": isinstance(inst, str), "boolean": isinstance(inst, bool),
                    "null": inst is None,
                    "integer": isinstance(inst, int) and not isinstance(inst, bool),
                    "number": isinstance(inst, (int, float)) and not isinstance(inst, bool)}[t]
        if not any(is_type(t) for t in types):
            return [f"{path}: expected {types}, got {type(inst).__name__}"]
    if "const" in schema and inst != schema["const"]:
        errors.append(f"{path}: expected {schema['const']!r}")
    if "enum" in schema and inst not in schema["enum"]:
        errors.append(f"{path}: {inst!r} not in {schema['enum']}")
    if isinstance(inst, (int, float)) and not isinstance(inst, bool) and "minimum" in schema:
        if inst < schema["minimum"]:
            errors.append(f"{path}: {inst} < {schema['minimum']}")
    if isinstance(inst, dict):
        for k in schema.get("required", []):
            if k not in inst:
                errors.append(f"{path}: missing {k}")
        props = schema.get("properties", {})
        for k, v in inst.items():
            if k in props:
                errors += tiny_validate(v, props[k], root, f"{path}.{k}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{path}: unexpected {k}")
    if isinstance(inst, list):
        if len(inst) < schema.get("minItems", 0):
            errors.append(f"{path}: fewer than {schema['minItems']} items")
        if "items" in schema:
            for i, v in enumerate(inst):
                errors += tiny_validate(v, schema["items"], root, f"{path}[{i}]")
    return errors


def validate(data):
    schema_path = next((p for p in SCHEMA_CANDIDATES if os.path.exists(p)), None)
    if not schema_path:
        print("report_plot: docs/schema/report.schema.json not found: not validated", file=sys.stderr)
        return True
    with open(schema_path) as f:
        schema = json.load(f)
    try:
        import jsonschema
        v = jsonschema.Draft202012Validator(schema)
        errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in v.iter_errors(data)]
        how = "jsonschema"
    except ImportError:
        errors = tiny_validate(data, schema, schema)
        how = "built-in checker"
    for e in errors[:20]:
        print("report_plot: schema:", e, file=sys.stderr)
    print(f"report_plot: results.json {'valid' if not errors else 'INVALID'} ({how})")
    return not errors


def table(rows, head):
    out = ["<table border=1 cellpadding=3>" + ("<tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in head) + "</tr>"
                                               if any(head) else "")]
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>")
    return "\n".join(out) + "</table>"


def med(s):
    return float("nan") if s is None else s["median"]


def err(s):
    """[lower, upper] error-bar lengths (median to min and max) of a stat object"""
    return (0, 0) if s is None else (s["median"] - s["min"], s["max"] - s["median"])


def fmt_stat(s, spec):
    return "-" if s is None else f"{format(s['median'], spec)} [{format(s['min'], spec)}-{format(s['max'], spec)}]"


TITLE = []  # --title TEXT: shown first in every plot and the page (e.g. the guest's report)


def label(data):
    t = data["trust"]["timings"]
    return "".join(x + ": " for x in TITLE) + {"emulated": "EMULATED timings (QEMU TCG)", "virtualized": "timings in a virtual machine",
            "measured": "measured timings"}[t]


def plot_factors(plt, data, d):
    fac, m = data["factors"], data["machine"]
    nodes = fac["nodes"]
    if len(nodes) == 1:  # a 1x1 heatmap says nothing: the local figures, with their ranges
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.6))
        lat = [fac["latency_ns"][0][0], fac["latency_4k_ns"][0][0]]
        a1.bar(["2 MiB pages", "4 KiB pages"], [med(s) for s in lat],
               yerr=list(zip(*[err(s) for s in lat])), capsize=6, color=["tab:blue", "tab:gray"])
        a1.set_ylabel("ns per dependent load")
        a1.set_ylim(bottom=0)
        a1.set_title(f"idle latency, node {nodes[0]} (one node: no remote memory)")
        bw = [fac["bandwidth_by_threads"][0]["mb_per_s"] if fac["bandwidth_by_threads"] else None,
              fac["bandwidth_mb_per_s"][0][0]]
        a2.bar(["1 thread", f"all {len(m['nodes'][0]['cpus'])} CPUs"], [med(s) for s in bw],
               yerr=list(zip(*[err(s) for s in bw])), capsize=6, color=["tab:gray", "tab:green"])
        a2.set_ylabel("triad MB/s")
        a2.set_ylim(bottom=0)
        a2.set_title("triad bandwidth, local")
    else:
        fig, axes = plt.subplots(1, 3, figsize=(5 * 3, 4.4))
        dist = m["distances"]
        for ax, key, title in zip(axes, ["latency_ns", "bandwidth_mb_per_s", "numa_factor"],
                                  ["idle latency, ns (2 MiB pages)", "triad MB/s (all CPUs of the node)",
                                   "NUMA factor (SLIT distance)"]):
            mat = [[(v if key == "numa_factor" else med(v)) if v is not None else float("nan") for v in row]
                   for row in fac[key]]
            im = ax.imshow(mat, cmap="viridis" if key == "bandwidth_mb_per_s" else "viridis_r")
            ax.set_xticks(range(len(nodes)), [str(n) for n in nodes])
            ax.set_yticks(range(len(nodes)), [str(n) for n in nodes])
            ax.set_xlabel("memory node")
            ax.set_ylabel("CPU node")
            ax.set_title(title)
            fs = max(6, 12 - len(nodes))
            for i, row in enumerate(mat):
                for j, v in enumerate(row):
                    if v == v:
                        txt = f"{v:.2f}\n({dist[i][j]})" if key == "numa_factor" else f"{v:.0f}"
                        ax.text(j, i, txt, ha="center", va="center", fontsize=fs, color="white",
                                bbox=dict(facecolor="black", alpha=0.35, lw=0, pad=1))
            fig.colorbar(im, ax=ax, shrink=0.8)
    fig.suptitle(label(data))
    fig.tight_layout()
    fig.savefig(os.path.join(d, "factors.png"), dpi=90)
    plt.close(fig)


def int_ticks(ax, top):
    ax.set_xticks(list(range(0, top + 1)) if top < 16 else None)


def plot_steps(plt, data, d):
    from matplotlib.ticker import MaxNLocator
    fac = data["factors"]
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(15, 4))
    ls = [p for p in fac["latency_by_size"] if p["ns"] is not None]
    a1.errorbar([p["bytes"] / 1024 for p in ls], [med(p["ns"]) for p in ls],
                yerr=list(zip(*[err(p["ns"]) for p in ls])) or None, fmt="o-", capsize=3)
    a1.set_xscale("log", base=2)
    a1.set_yscale("log")
    for name, size in zip(("L1d", "L2", "L3"), fac["cache_bytes"]):
        if size:
            a1.axvline(size / 1024, color="gray", ls="--")
            a1.text(size / 1024, a1.get_ylim()[1], f" {name} {size >> 10} KiB", rotation=90,
                    va="top", fontsize=8, color="gray")
    a1.set_xlabel("working set (KiB, log)")
    a1.set_ylabel("ns per dependent load (log)")
    a1.set_title(f"latency vs working set (node {fac['bandwidth_node']}, 2 MiB pages)")
    bt = [p for p in fac["bandwidth_by_threads"] if p["mb_per_s"] is not None]
    a2.errorbar([p["threads"] for p in bt], [med(p["mb_per_s"]) for p in bt],
                yerr=list(zip(*[err(p["mb_per_s"]) for p in bt])) or None, fmt="s-", capsize=3)
    a2.set_xlim(0, max([p["threads"] for p in bt] + [1]) + 0.5)
    a2.set_ylim(bottom=0)
    a2.xaxis.set_major_locator(MaxNLocator(integer=True))
    a2.set_xlabel("threads on the node")
    a2.set_ylabel("triad MB/s")
    a2.set_title("bandwidth vs threads")
    ll = [p for p in fac["loaded_latency"] if p["ns"] is not None]
    a3.errorbar([p["streaming_cpus"] for p in ll], [med(p["ns"]) for p in ll],
                yerr=list(zip(*[err(p["ns"]) for p in ll])) or None, fmt="^-", capsize=3)
    a3.set_xlim(-0.5, max([p["streaming_cpus"] for p in ll] + [1]) + 0.5)
    a3.set_ylim(bottom=0)
    a3.xaxis.set_major_locator(MaxNLocator(integer=True))
    a3.set_xlabel("other CPUs streaming (triad)")
    a3.set_ylabel("ns per dependent load")
    a3.set_title("loaded latency")
    fig.suptitle(label(data) + "; error bars: min-max of the repetitions")
    fig.tight_layout()
    fig.savefig(os.path.join(d, "steps.png"), dpi=90)
    plt.close(fig)


def plot_policies(plt, data, d):
    ch = data["characterization"]
    pols = []
    for r in ch["results"]:
        if r["policy"] not in pols:
            pols.append(r["policy"])
    groups = [(a, s) for a in ("regular", "irregular", "random") for s in ("static", "dynamic")]
    fig, axes = plt.subplots(3, 1, figsize=(12, 10))
    w = 0.8 / max(1, len(pols))
    for ax, op in zip(axes, ("read", "write", "read-write")):
        for k, pol in enumerate(pols):
            st = [next((r["seconds"] for r in ch["results"] if r["op"] == op and r["access"] == a
                        and r["schedule"] == s and r["policy"] == pol), None) for a, s in groups]
            ax.bar([g + k * w for g in range(len(groups))], [med(x) * 1e3 for x in st], w,
                   yerr=[[e[0] * 1e3 for e in map(err, st)], [e[1] * 1e3 for e in map(err, st)]],
                   capsize=2, label=pol)
        ax.set_xticks([g + 0.4 - w / 2 for g in range(len(groups))], [f"{a}\n{s}" for a, s in groups])
        ax.set_ylim(bottom=0)
        ax.set_ylabel("ms (median, min-max)")
        ax.set_title(f"{op}: time per policy ({ch['threads']} threads, {ch['array_bytes'] >> 20} MiB, "
                     f"{ch['reps']} repetitions)")
    axes[0].legend(ncol=5, fontsize=8)
    note = label(data)
    if data["machine"]["node_count"] == 1:
        note += "; one node: placement is identical, differences are initialization or noise"
    fig.suptitle(note)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "policies.png"), dpi=90)
    plt.close(fig)


def rec_text(r):
    if r["basis"] != "timings":
        return "not judged (emulated timings)"
    if r["policy"] is None:
        return "not measured"
    if not r["measurable"]:
        return "no measurable difference"
    if r["compared_with"] is None:
        return "ties with the fastest"
    return f"margin {r['margin_fraction'] * 100:.0f}% ({r['compared_with']} takes that much longer)"


def locality_html(data):
    ch = data["characterization"]
    nodes = data["factors"]["nodes"]
    rows = [[l["policy"], "-" if l["remote_fraction_static"] is None else f"{l['remote_fraction_static'] * 100:.1f}%",
             "-" if l["remote_fraction_shared"] is None else f"{l['remote_fraction_shared'] * 100:.1f}%"]
            + [n["pages"] for n in l["nodes"]] for l in ch["locality"]]
    return ("<h3>Exact locality (page counts, not timings)</h3>" +
            table(rows, ["policy", "remote accesses, own block", "remote accesses, every page"] +
                  [f"pages on node {n}" for n in nodes]))


def peak_text(fac):
    """the headline bandwidth as every other figure: a median [min-max], and its mix"""
    mix = next((x for x in fac["mixes"] if x["read_write"] == fac.get("peak_read_write")), None)
    if mix is None:  # a report written before peak_read_write: its best repetition
        return f"{fac['peak_mb_per_s']:.0f} MB/s (best repetition of any mix)"
    return f"{fmt_stat(mix['mb_per_s'], '.0f')} MB/s ({mix['read_write']} mix, the highest median)"


def policy_spread(data):
    """one node: the largest difference between the policies' medians, per operation and access
    pattern, as a fraction of the fastest (what the 162 bars of the policies' plot would show)"""
    ch, worst = data["characterization"], (0.0, None)
    keys = {(r["op"], r["access"], r["schedule"]) for r in ch["results"]}
    for k in sorted(keys):
        meds = [med(r["seconds"]) for r in ch["results"] if (r["op"], r["access"], r["schedule"]) == k]
        meds = [x for x in meds if x == x and x > 0]
        if len(meds) >= 2 and (max(meds) - min(meds)) / min(meds) > worst[0]:
            worst = ((max(meds) - min(meds)) / min(meds), k)
    return worst


def verdict_html(data):
    v, t, fac = data["verdict"], data["trust"], data["factors"]
    p = [f"<h2>Verdict: {html.escape(label(data))}</h2>"]
    if t["warnings"]:
        p.append("<ul>" + "".join(f"<li><b>{html.escape(w)}</b></li>" for w in t["warnings"]) + "</ul>")
    rows = []
    if v["worst_latency_factor"] is None:
        rows.append(["latency factor", "none: one NUMA node, no remote memory"])
    else:
        rows += [["latency factor (remote/local)", f"worst {v['worst_latency_factor']:.2f}, mean {v['mean_latency_factor']:.2f}"],
                 ["remote-bandwidth penalty", "-" if v["remote_bandwidth_penalty_fraction"] is None else
                  f"{v['remote_bandwidth_penalty_fraction'] * 100:.0f}% (mean of 1 - remote/local triad bandwidth)"]]
    rows.append(["measured spread", f"median {t['spread_median_fraction'] * 100:.1f}%, max {t['spread_max_fraction'] * 100:.1f}% "
                 f"((max-min)/median, {data['reps']} repetitions)"])
    rows.append(["local idle latency", f"{fmt_stat(fac['latency_ns'][0][0], '.1f')} ns on {fac['huge_page_kind']} pages; "
                 f"{fmt_stat(fac['latency_4k_ns'][0][0], '.1f')} ns on 4 KiB pages"])
    rows.append(["peak bandwidth", peak_text(fac)])
    p.append(table(rows, ["", ""]))
    recs = data["recommendations"]
    diff = [r for r in recs if r["measurable"]]
    if t["timings"] == "emulated":
        p.append("<p><b>No recommendation: emulated times judge no policy.</b> The result is the exact "
                 "locality below.</p>")
        p.append(locality_html(data))
        p.append("<p><b>Rule (for measured timings).</b> " + html.escape(v["rule"]) + "</p>")
        return p
    p.append(f"<p>{len(diff)} of {len(recs)} access patterns show a measurable difference"
             f"{'' if diff else ': keep first_touch'}.</p>")
    if diff:
        p.append(table([[r["op"], r["access"], r["schedule"], r["policy"], rec_text(r)] for r in diff],
                       ["operation", "access", "schedule", "policy", "margin"]))
    p.append("<p><b>Rule.</b> " + html.escape(v["rule"]) + "</p>")
    p.append(locality_html(data))
    return p


def kept_advice(path):
    """The advice section of the page at path, markers included (escaped by numaplace: a string
    from the profile cannot make a marker), or "" where there is none."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return ""
    i = text.find(ADVICE_BEGIN)
    j = text.find(ADVICE_END, i + 1) if i >= 0 else -1
    return text[i:j + len(ADVICE_END)] if j > i else ""


def page(data, imgs, advice=""):
    fac, m, h = data["factors"], data["machine"], data["host"]
    nodes = fac["nodes"]
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>numaplace report</title></head><body>",
             f"<h1>numaplace report{html.escape(''.join(': ' + x for x in TITLE))}</h1>",
             f"<p>numaplace {html.escape(data['numaplace_version'])}, {html.escape(data['generated_utc'])}, "
             f"{html.escape(data['level'])} sizes{' (too small for conclusions)' if data['quick'] else ''}.</p>"]
    parts += verdict_html(data)
    if advice:
        parts.append(advice)
    for title, img in imgs:
        parts.append(f"<h2>{html.escape(title)}</h2><img src='{img}' alt='{html.escape(title)}'>")
    if m["node_count"] == 1:
        spread, k = policy_spread(data)
        parts.append("<h2>Characterization (one node)</h2><p>One NUMA node: every policy puts every page "
                     "on it, so the policies differ only in who first touches the array; their timings "
                     "are not drawn. " + (f"The largest difference between two policies' medians: "
                     f"{spread * 100:.0f}% ({html.escape(' '.join(k))}); the figures are in "
                     "results.json." if k else "No two policies were measured alike.") + "</p>")
    parts.append("<h2>Factor matrix (median [min-max])</h2>")
    parts.append(table([[f"node {nodes[i]}"] + [f"{fmt_stat(v, '.1f')} / {fmt_stat(fac['latency_4k_ns'][i][j], '.1f')} "
                                                 f"(SLIT {m['distances'][i][j]})" for j, v in enumerate(row)]
                        for i, row in enumerate(fac["latency_ns"])],
                       ["latency ns: 2 MiB / 4 KiB pages"] + [f"mem {n}" for n in nodes]))
    parts.append(table([[f"node {nodes[i]}"] + [fmt_stat(v, ".0f") for v in row] for i, row in enumerate(fac["bandwidth_mb_per_s"])],
                       ["triad MB/s, all CPUs"] + [f"mem {n}" for n in nodes]))
    parts.append(table([[x["read_write"], fmt_stat(x["mb_per_s"], ".0f")] for x in fac["mixes"]], ["read:write mix", "MB/s"]))
    parts.append("<h2>Machine</h2>")
    parts.append(table([[k, v] for k, v in h.items()], ["", ""]))
    parts.append(table([[n["os_id"], n["memory_bytes"] >> 20, ",".join(map(str, n["cpus"]))] for n in m["nodes"]],
                       ["node", "memory (MiB)", "CPUs"]))
    parts.append("<p>Data: <a href='results.json'>results.json</a> (schema docs/schema/report.schema.json).</p></body></html>")
    return "\n".join(parts) + "\n"


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    d = argv[1]
    if "--title" in argv[:-1]:
        TITLE.append(argv[argv.index("--title") + 1])
    try:
        with open(os.path.join(d, "results.json")) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        print(f"report_plot: cannot read {d}/results.json: {e}", file=sys.stderr)
        return 2
    if not validate(data):
        return 1
    if "--validate-only" in argv:
        return 0
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        # a python3 first on PATH (pyenv, venv) may lack the Debian package: try the system one
        sysp = "/usr/bin/python3"
        if (os.path.exists(sysp) and os.path.realpath(sys.executable) != os.path.realpath(sysp)
                and not os.environ.get("NPL_PLOT_REEXEC")):
            os.environ["NPL_PLOT_REEXEC"] = "1"
            os.execv(sysp, [sysp, os.path.abspath(__file__)] + argv[1:])
        print("report_plot: matplotlib is not installed (apt-get install python3-matplotlib)",
              file=sys.stderr)
        return 3
    one_node = data["machine"]["node_count"] == 1
    plot_factors(plt, data, d)
    plot_steps(plt, data, d)
    imgs = [("NUMA factors" if not one_node else "Local latency and bandwidth (one node)", "factors.png"),
            ("Cache steps, contention and loaded latency", "steps.png")]
    if not one_node:  # on one node every policy places alike: 162 bars of noise (page() says so)
        plot_policies(plt, data, d)
        imgs.append(("Characterization: time per policy", "policies.png"))
    elif os.path.exists(os.path.join(d, "policies.png")):
        os.remove(os.path.join(d, "policies.png"))
    index = os.path.join(d, "index.html")
    advice = kept_advice(index)
    with open(index, "w", encoding="utf-8") as f:
        f.write(page(data, imgs, advice))
    print(f"report_plot: wrote {d}/index.html and {len(imgs)} plots")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
