#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Put an "SPDX-License-Identifier: BSD-3-Clause" line into every source file of the tree (C, C++,
# headers, CMake, shell, Python, Fortran, man pages, numaplace.pc.in, Doxyfile), as a comment in
# each file's own syntax: on line 1, or on line 2 after a "#!" line or a man page's '\" line.
#   scripts/spdx.sh           add the line where it is missing (idempotent)
#   scripts/spdx.sh --check   list the files without it; exit 1 when there is one
# The files are git's tracked files (or, outside git, every file under the tree); data (JSON,
# text, fuzz corpora, logs, images) and Markdown are not source and are left alone.
set -eu
cd "$(dirname "$0")/.."
ID="SPDX-License-Identifier: BSD-3-Clause"
mode=add
case "${1:-}" in
    --check) mode=check ;;
    "") ;;
    *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

# comment prefix and suffix for a file, or nothing when it is not a source file
syntax() {
    case "$1" in
        */fuzz/corpus/*) return 1 ;;
        fortran/*.inc|*.f90|*.F90|*.f) echo '! |' ;;
        *.c|*.h|*.cpp|*.hpp|*.cc|*.inc|*.map) echo '/* | */' ;;
        *.[1-9]) printf '%s\n' '.\" |' ;;
        CMakeLists.txt|*/CMakeLists.txt|*.cmake|*.cmake.in|*.pc.in|Doxyfile|*.sh|*.py) echo '# |' ;;
        *.*) return 1 ;;
        *) head -c 2 "$1" 2>/dev/null | grep -q '^#!' && echo '# |' || return 1 ;;
    esac
}

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git ls-files)
else
    files=$(find . -type f ! -path './build*' ! -path './.git/*' | sed 's|^\./||')
fi
missing=0
for f in $files; do
    [ -f "$f" ] || continue
    s=$(syntax "$f") || continue
    head -n 3 "$f" | grep -q "$ID" && continue
    if [ "$mode" = check ]; then
        echo "no SPDX line: $f"; missing=$((missing + 1)); continue
    fi
    pre=${s%%|*}; post=${s#*|}
    line="$pre$ID$post"
    first=$(head -n 1 "$f")
    case "$first" in
        '#!'*|"'\\\""*) { printf '%s\n' "$first" "$line"; tail -n +2 "$f"; } > "$f.spdx" ;;
        *) { printf '%s\n' "$line"; cat "$f"; } > "$f.spdx" ;;
    esac
    chmod --reference="$f" "$f.spdx" 2>/dev/null || true
    mv "$f.spdx" "$f"
done
if [ "$mode" = check ]; then
    [ "$missing" -eq 0 ] && { echo "spdx: every source file has its SPDX line"; exit 0; }
    echo "spdx: $missing source files without '$ID' (scripts/spdx.sh adds it)"; exit 1
fi
