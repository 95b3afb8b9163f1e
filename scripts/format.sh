#!/usr/bin/env bash
# scripts/format.sh [--check] - formats smd's C, C++ and CUDA sources with
# the repository's .clang-format (clang-format 14, Debian bookworm's: other
# versions format some constructs differently). With --check nothing is
# changed: the files that are not formatted are listed and the exit status
# is 1 (the test 'format' runs this).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
check=0
[[ "${1:-}" == "--check" ]] && check=1

tool=""
for t in clang-format-14 clang-format; do
  if command -v "$t" >/dev/null && "$t" --version | grep -q "version 14\."; then tool="$t"; break; fi
done
if [[ -z "$tool" ]]; then
  echo "format.sh: clang-format 14 not found (scripts/lib.sh installs Debian's clang-format)" >&2
  # 77: meson's "skipped"; a plain run fails.
  exit $((check ? 77 : 1))
fi

dirs=(src include tools tests bench bindings examples)
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- "${dirs[@]}" | grep -E '\.(c|cc|cpp|h|cu|cuh)$')
else
  mapfile -t files < <(find "${dirs[@]}" -type f \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' \
    -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort)
fi

if (( ! check )); then
  "$tool" -i "${files[@]}"
  exit 0
fi
if out="$("$tool" --dry-run --Werror "${files[@]}" 2>&1)"; then
  echo "format: ${#files[@]} files formatted"
  exit 0
fi
echo "$out" | grep -oE '^[^: ]+\.(c|cc|cpp|h|cu|cuh):' | sed 's/:$//' | sort -u | sed 's/^/not formatted: /'
echo "(scripts/format.sh formats them)"
exit 1
