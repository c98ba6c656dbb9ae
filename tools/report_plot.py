#!/usr/bin/env python3
"""report_plot.py DIR [--validate-only] - plots and index.html for `numaplace report`.

Reads DIR/results.json, validates it against docs/report.schema.json (python3-jsonschema when
installed, else the small checker below, which understands the subset of JSON Schema the file
uses), and writes DIR/*.png (matplotlib) and DIR/index.html.

Exit status: 0; 1 the JSON does not validate; 2 bad usage or unreadable files;
3 matplotlib is not installed (apt-get install python3-matplotlib).
"""
import html
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_CANDIDATES = [os.path.join(HERE, "..", "docs", "report.schema.json"),
                     os.path.join(HERE, "report.schema.json")]


def tiny_validate(inst, schema, root, path="$"):
    """The JSON Schema subset used by docs/report.schema.json: type, const, enum, required,
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
        print("report_plot: docs/report.schema.json not found: not validated", file=sys.stderr)
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
    out = ["<table border=1 cellpadding=3><tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in head) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>")
    return "\n".join(out) + "</table>"


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    d = argv[1]
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
    fac = data["factors"]
    nodes = fac["nodes"]
    imgs = []

    def nan(m):
        return [[float("nan") if v is None else v for v in row] for row in m]

    # heatmaps of the factor matrix
    fig, axes = plt.subplots(1, 3, figsize=(4.2 * 3, 3.8))
    for ax, key, title in zip(axes, ["latency_ns", "bandwidth_mbs", "numa_factor"],
                              ["latency (ns/load)", "triad bandwidth (MB/s)", "NUMA factor (remote/local)"]):
        m = nan(fac[key])
        im = ax.imshow(m, cmap="viridis_r" if key != "bandwidth_mbs" else "viridis")
        ax.set_title(title)
        ax.set_xticks(range(len(nodes)), [str(n) for n in nodes])
        ax.set_yticks(range(len(nodes)), [str(n) for n in nodes])
        ax.set_xlabel("memory node")
        ax.set_ylabel("CPU node")
        for i, row in enumerate(m):
            for j, v in enumerate(row):
                if v == v:
                    ax.text(j, i, f"{v:.3g}", ha="center", va="center", color="w", fontsize=8)
        fig.colorbar(im, ax=ax, shrink=0.8)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "factors.png"), dpi=90)
    plt.close(fig)
    imgs.append(("NUMA factor matrix", "factors.png"))

    # cache steps and contention
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.6))
    ls = [p for p in fac["latency_by_size"] if p["ns"] is not None]
    a1.plot([p["bytes"] / 1024 for p in ls], [p["ns"] for p in ls], "o-")
    a1.set_xscale("log")
    a1.set_xlabel("working set (KiB)")
    a1.set_ylabel("ns per dependent load")
    a1.set_title(f"latency vs working set (node {fac['bandwidth_node']})")
    bt = [p for p in fac["bandwidth_by_threads"] if p["mbs"] is not None]
    a2.plot([p["threads"] for p in bt], [p["mbs"] for p in bt], "s-")
    a2.set_xlabel("threads on the node")
    a2.set_ylabel("triad MB/s")
    a2.set_title("bandwidth vs threads")
    fig.tight_layout()
    fig.savefig(os.path.join(d, "steps.png"), dpi=90)
    plt.close(fig)
    imgs.append(("Cache steps and contention", "steps.png"))

    # bars per policy, one panel per operation, groups = access x schedule
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
            vals = []
            for a, s in groups:
                v = next((r["seconds"] for r in ch["results"] if r["op"] == op and r["access"] == a
                          and r["schedule"] == s and r["policy"] == pol), None)
                vals.append(float("nan") if v is None else v * 1e3)
            ax.bar([g + k * w for g in range(len(groups))], vals, w, label=pol)
        ax.set_xticks([g + 0.4 - w / 2 for g in range(len(groups))], [f"{a}\n{s}" for a, s in groups])
        ax.set_ylabel("ms (best)")
        ax.set_title(f"{op}: time per policy ({ch['threads']} threads, {ch['array_bytes'] >> 20} MiB)")
    axes[0].legend(ncol=4, fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "policies.png"), dpi=90)
    plt.close(fig)
    imgs.append(("Characterization: time per policy", "policies.png"))

    m = data["machine"]
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>numaplace report</title></head><body>",
             "<h1>numaplace report</h1>",
             f"<p>numaplace {html.escape(data['version'])}, {html.escape(data['generated'])}"
             f"{' (--quick: sizes too small for real conclusions)' if data['quick'] else ''}.</p>",
             f"<p>{m['nnodes']} node(s), {m['cpus_allowed']} CPU(s) allowed. {html.escape(m['note'])}</p>",
             table([[n["os_id"], n["memory_bytes"] >> 20, ",".join(map(str, n["cpus"]))] for n in m["nodes"]],
                   ["node", "memory (MiB)", "CPUs"])]
    for title, img in imgs:
        parts.append(f"<h2>{html.escape(title)}</h2><img src='{img}' alt='{html.escape(title)}'>")
    parts.append("<h2>Recommendations</h2><p>Rule: " + html.escape(data["rule"]) + "</p>")
    parts.append(table([[r["op"], r["access"], r["schedule"], r["policy"] or "-", r["reason"]]
                        for r in data["recommendations"]], ["operation", "access", "schedule", "policy", "why"]))
    parts.append("<h2>Factor matrix (numbers)</h2>")
    parts.append(table([[f"node {nodes[i]}"] + [fmt(v, ".1f") for v in row] for i, row in enumerate(fac["latency_ns"])],
                       ["latency ns"] + [f"mem {n}" for n in nodes]))
    parts.append(table([[f"node {nodes[i]}"] + [fmt(v, ".0f") for v in row] for i, row in enumerate(fac["bandwidth_mbs"])],
                       ["triad MB/s"] + [f"mem {n}" for n in nodes]))
    parts.append("<p>Data: <a href='results.json'>results.json</a> (schema docs/report.schema.json).</p></body></html>")
    with open(os.path.join(d, "index.html"), "w") as f:
        f.write("\n".join(parts) + "\n")
    print(f"report_plot: wrote {d}/index.html and {len(imgs)} plots")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
