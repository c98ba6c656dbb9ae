#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_layers.py - no include and no call runs back up.

The library is one folder per layer under src/ (docs/DESIGN.md). LAYERS below is the table of
allowed directions: a file of layer L may include the headers of, and call the functions defined
in, L itself and the layers listed for L; nothing else. Outside src/, the interposer (preload/) may
use any layer, and the command line (cli/), the MAi layer (mai/) and the benchmarks (bench/) use
the public headers only, plus the few private headers named in OUTSIDE. A layer's face is the
header named after its folder; any other header in a folder is that folder's own. In cli/, the
and preload/, the ground files (FOLDERS) call nothing above them, nothing calls the top (main.c,
init.c), and no circle of calls runs among the folder's files. Sizes: no file of src/, preload/
or cli/ over MAX_FILE_LINES lines, no function over MAX_FUNC_LINES.

usage: check_layers.py [ROOT]      exit 0: every direction allowed; 1: violations (listed)
       check_layers.py --selftest  plants an upward include and an upward call in a copy of the
                                   tree and requires both to be caught (and the clean copy to pass)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

# layer -> the layers it may use, lowest first. The order of the keys is the order data flows.
LAYERS = {
    "base": [],
    "sys": ["base"],
    "topology": ["base", "sys"],
    "plan": ["base", "topology"],  # pure: it never reaches the kernel itself
    "place": ["base", "sys", "topology", "plan"],
    "query": ["base", "sys", "topology", "plan"],
    "migration": ["base", "sys", "topology", "plan", "place", "query"],
    "arrays": ["base", "sys", "topology", "plan", "place", "query", "migration"],
    "profile": ["base", "sys", "topology", "plan", "place", "query", "migration", "arrays"],
    "defaults": ["base", "sys", "topology", "plan", "place", "query", "migration", "arrays", "profile"],
}
MAX_FILE_LINES = 1000
MAX_FUNC_LINES = 100
SIZED = ("src", "preload", "cli")


def function_lengths(path):
    """(name, first line, lines) of each function defined in a C file: a body opens with '{' in
    column 0 (the project's style) and ends where its braces balance."""
    out, depth, start, name = [], 0, None, "?"
    lines = open(path, errors="replace").read().split("\n")
    for i, line in enumerate(lines):
        code = re.sub(r"//.*", "", re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'', "", line))
        if depth == 0 and start is None and code.startswith("{"):
            j = i - 1
            while j >= 0 and "(" not in lines[j]:
                j -= 1
            m = re.search(r"(\w+)\s*\(", lines[j]) if j >= 0 else None
            start, name = i, m.group(1) if m else "?"
        depth += code.count("{") - code.count("}")
        if depth == 0 and start is not None and "}" in code:
            out.append((name, start + 1, i - start + 1))
            start = None
    return out


def check_sizes(root):
    problems = []
    for top in SIZED:
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(d, f)
                rel = os.path.relpath(path, root)
                n = sum(1 for _ in open(path, errors="replace"))
                if n > MAX_FILE_LINES:
                    problems.append(f"{rel}: {n} lines (at most {MAX_FILE_LINES})")
                for name, line, length in function_lengths(path) if f.endswith(".c") else []:
                    if length > MAX_FUNC_LINES:
                        problems.append(f"{rel}:{line}: {name}() is {length} lines (at most "
                                        f"{MAX_FUNC_LINES})")
    return problems


# folders outside src/ -> the private src/ headers they may include (None: any layer)
OUTSIDE = {
    "preload": None,
    # the library's unstable face (src/libnumaplace.map's NUMAPLACE_PRIVATE): linked, not compiled in
    "cli": ["base/base.h", "base/number.h", "profile/profile.h"],
    "mai": [],
    "bench": [],
    "fortran": [],
}

# cli/ and preload/: folder -> (its ground files, lowest first: each may call only those before it;
# its top, which nothing calls). The files between may call each other, never in a circle.
# cli/: the subcommand files above common.c (profile calls run's set-up and advise's table).
# preload/: the files that interpose (malloc, apply, profile, io...) above ground.c (configuration,
# messages, re-entry guard, block allocator) and limits.c; init.c's constructor at the top.
FOLDERS = {
    "cli": (["cli/common.c", "cli/json.c", "cli/html.c"], "cli/main.c"),
    "preload": (["preload/limits.c", "preload/ground.c"], "preload/init.c"),
}

DEF_RE = re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b(npl_\w+)\s*\([^;]*?\)\s*\{", re.M | re.S)
CALL_RE = re.compile(r"\b(npl_\w+)\s*\(")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def strip_comments_and_strings(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


def sources(folder):
    for dirpath, _, files in os.walk(folder):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(dirpath, f)


def check(root):
    src = os.path.join(root, "src")
    problems = []
    layer_of_file = {}
    for layer in os.listdir(src):
        path = os.path.join(src, layer)
        if not os.path.isdir(path):
            continue
        if layer not in LAYERS:
            problems.append(f"src/{layer}/: a folder that is no layer of the table")
            continue
        for f in sources(path):
            layer_of_file[f] = layer
    for f in sources(src):
        if f not in layer_of_file and os.path.dirname(f) == src:
            problems.append(f"{os.path.relpath(f, root)}: a source outside every layer folder")

    # where each function is defined
    defined_in = {}
    for f, layer in layer_of_file.items():
        if f.endswith(".c"):
            for m in DEF_RE.finditer(strip_comments_and_strings(open(f, errors="replace").read())):
                defined_in.setdefault(m.group(1), layer)

    for f, layer in sorted(layer_of_file.items()):
        rel = os.path.relpath(f, root)
        raw = open(f, errors="replace").read()
        allowed = set(LAYERS[layer]) | {layer}
        for inc in INCLUDE_RE.findall(raw):
            if inc.startswith("numaplace"):  # the public headers
                continue
            top = inc.split("/")[0] if "/" in inc else None
            if top is None:
                problems.append(f"{rel}: #include \"{inc}\" names no layer (write \"LAYER/{inc}\")")
            elif top not in allowed:
                problems.append(f"{rel}: #include \"{inc}\" runs up from {layer} to {top}")
        body = strip_comments_and_strings(raw)
        for m in CALL_RE.finditer(body):
            callee = m.group(1)
            target = defined_in.get(callee)
            if target and target not in allowed:
                line = body.count("\n", 0, m.start()) + 1
                problems.append(f"{rel}:{line}: calls {callee} (in {target}/): runs up from {layer}")

    for folder, private in OUTSIDE.items():
        path = os.path.join(root, folder)
        if not os.path.isdir(path):
            continue
        for f in sources(path):
            rel = os.path.relpath(f, root)
            for inc in INCLUDE_RE.findall(open(f, errors="replace").read()):
                top = inc.split("/")[0] if "/" in inc else None
                if top in LAYERS and private is not None and inc not in private:
                    problems.append(f"{rel}: #include \"{inc}\": {folder}/ uses the public API only")
    # one face per layer folder, the header named after it; any other header of the folder is the
    # folder's own (profile/json.h: the format's JSON): included by no file outside that folder
    inner = {}
    for layer in LAYERS:
        path = os.path.join(src, layer)
        if os.path.isdir(path):
            for h in sorted(os.listdir(path)):
                if h.endswith(".h") and h != f"{layer}.h" and not (layer == "base" and h == "number.h"):
                    inner[f"{layer}/{h}"] = layer
    for folder in ["src"] + list(OUTSIDE):
        for f in sources(os.path.join(root, folder)):
            rel = os.path.relpath(f, root)
            for inc in INCLUDE_RE.findall(open(f, errors="replace").read()):
                if inc in inner and layer_of_file.get(f) != inner[inc]:
                    problems.append(f"{rel}: #include \"{inc}\": a header of {inner[inc]}/'s own "
                                    f"(its face is {inner[inc]}/{inner[inc]}.h)")
    return problems


def check_folder(root, folder):
    """A folder's direction: its ground calls nothing above it, nothing calls its top, no circle."""
    ground, top = FOLDERS[folder]
    files = [f for f in sources(os.path.join(root, folder)) if f.endswith(".c")]
    if not files:
        return []
    rel = {f: os.path.relpath(f, root) for f in files}
    body = {f: strip_comments_and_strings(open(f, errors="replace").read()) for f in files}
    any_def = re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b(\w+)\s*\([^;]*?\)\s*\{", re.M | re.S)
    defined_in = {}
    for f in files:
        for m in any_def.finditer(body[f]):
            if not m.group(0).startswith("EXPORT"):  # an interposed C library function: not ours
                defined_in.setdefault(m.group(1), rel[f])
    problems, edges = [], {}
    for f in files:
        me = rel[f]
        for m in re.finditer(r"\b(\w+)\s*\(", body[f]):
            target = defined_in.get(m.group(1))
            if not target or target == me:
                continue
            edges.setdefault(me, set()).add(target)
            line = body[f].count("\n", 0, m.start()) + 1
            if target == top:
                problems.append(f"{me}:{line}: calls {m.group(1)} ({top}): nothing calls the top")
            if me in ground and (target not in ground or ground.index(target) > ground.index(me)):
                problems.append(f"{me}:{line}: calls {m.group(1)} ({target}): a ground file of "
                                f"{folder}/ calls up")
    # a circle: a file that reaches itself
    for start in sorted(edges):
        seen, todo = set(), list(edges[start])
        while todo:
            g = todo.pop()
            if g == start:
                problems.append(f"{start}: in a circle of calls among {folder}/ files")
                break
            if g not in seen:
                seen.add(g)
                todo.extend(edges.get(g, ()))
    return sorted(set(problems))


def selftest(root):
    tmp = tempfile.mkdtemp(prefix="check-layers.")
    try:
        shutil.copytree(os.path.join(root, "src"), os.path.join(tmp, "src"))
        for folder in FOLDERS:
            shutil.copytree(os.path.join(root, folder), os.path.join(tmp, folder))
        me = os.path.abspath(__file__)
        clean = subprocess.run([sys.executable, me, tmp], capture_output=True, text=True)
        if clean.returncode != 0:
            print("selftest: the unmodified copy fails:\n" + clean.stdout)
            return 1
        # plant one upward include (sys -> arrays) and one upward call (plan -> arrays)
        with open(os.path.join(tmp, "src/sys/syscalls.c"), "a") as f:
            f.write('\n#include "arrays/arrays.h"\n')
        with open(os.path.join(tmp, "src/plan/plan.c"), "a") as f:
            f.write("\nint npl__planted(void) { return npl_free(0); }\n")
        with open(os.path.join(tmp, "cli/common.c"), "a") as f:  # cli/'s ground calls a subcommand
            f.write("\nint cli_planted(void) { return cmd_topo(0, 0); }\n")
        with open(os.path.join(tmp, "preload/ground.c"), "a") as f:  # the ground calls malloc's file
            f.write("\nvoid npl__planted(void) { npl__preload_alloc_init(); }\n")
        with open(os.path.join(tmp, "src/defaults/auto.c"), "a") as f:  # a folder's own header
            f.write('\n#include "profile/json.h"\n')
        with open(os.path.join(tmp, "src/base/text.c"), "a") as f:  # a function too long
            f.write("\nint npl__planted_long(void)\n{\n" + "    (void)0;\n" * MAX_FUNC_LINES + "}\n")
        bad = subprocess.run([sys.executable, me, tmp], capture_output=True, text=True)
        want = ['syscalls.c: #include "arrays/arrays.h" runs up from sys to arrays',
                "calls npl_free (in arrays/): runs up from plan",
                'auto.c: #include "profile/json.h": a header of profile/\'s own',
                "calls cmd_topo (cli/topo.c): a ground file of cli/ calls up",
                "cli/common.c: in a circle of calls among cli/ files",
                "calls npl__preload_alloc_init (preload/alloc.c): a ground file of preload/ calls up",
                "npl__planted_long() is %d lines" % (MAX_FUNC_LINES + 2)]
        missing = [w for w in want if w not in bad.stdout]
        if bad.returncode == 0 or missing:
            print("selftest: planted violations not caught: %s\n%s" % (missing, bad.stdout))
            return 1
        print("check_layers selftest: clean tree passes; the planted upward include and call, the"
              " include of a folder's own header, cli/'s and preload/'s upward calls and circle, a function"
              " too long fail")
        return 0
    finally:
        shutil.rmtree(tmp)


def main():
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    args = sys.argv[1:]
    if args and args[0] == "--selftest":
        return selftest(root)
    if args:
        root = os.path.abspath(args[0])
    problems = check(root) + [p for f in FOLDERS for p in check_folder(root, f)] + check_sizes(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} direction(s) not allowed by the table in {__file__}")
        return 1
    print("check_layers: every include and call in src/ runs down the table (%d layers); cli/'s "
          "and preload/'s ground call nothing above them, no circle; no file over %d lines, no function over "
          "%d" % (len(LAYERS), MAX_FILE_LINES, MAX_FUNC_LINES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
