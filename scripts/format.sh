#!/usr/bin/env bash
# Formats refx's C++ sources with clang-format 15 and the repository's
# .clang-format, or, with --check, fails naming every file that does not
# follow it (ctest format.check runs this in CI).
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   change nothing; exit 1 if a file would change
# Files: *.hpp / *.cpp under include, src and bench: the library and its
# measurements. tests/ and examples/ keep their own layout: many tests assert
# the source line an error names (`line = __LINE__; op;` on one line, kept
# there on purpose), and the docs quote the examples verbatim.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tool=${CLANG_FORMAT:-}
if [[ -z "$tool" ]]; then
  for candidate in clang-format-15 clang-format; do
    if command -v "$candidate" >/dev/null && "$candidate" --version | grep -q 'version 15\.'; then
      tool=$candidate
      break
    fi
  done
fi
if [[ -z "$tool" ]]; then
  echo "format.sh: clang-format 15 is not installed (scripts/setup.sh installs clang-format-15)" >&2
  exit 2
fi

mapfile -t files < <(find include src bench \( -name '*.hpp' -o -name '*.cpp' \) -print | sort)
if [[ "${1:-}" == "--check" ]]; then
  mapfile -t bad < <("$tool" --dry-run "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' | sort -u)
  if ((${#bad[@]} > 0)); then
    echo "format.sh: ${#bad[@]} of ${#files[@]} files do not follow .clang-format (run scripts/format.sh to fix):" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format.sh: all ${#files[@]} files follow .clang-format"
else
  "$tool" -i "${files[@]}"
fi
