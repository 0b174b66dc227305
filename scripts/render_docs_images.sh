#!/usr/bin/env bash
# Regenerates the images the README and docs/runtime.md show, from
# examples/ring_all_reduce (preset "default"):
#   docs/images/ring_all_reduce_timeline.png  its timeline (REFX_TRACE_FILE,
#                                             rendered by scripts/render_timeline.py)
#   docs/images/ring_all_reduce_graph.png     its effect graph (REFX_DOT_FILE, dot -Tpng)
# The JSON and DOT files stay in build/default/timelines/ (open the JSON in
# https://ui.perfetto.dev). Installs missing packages first; safe to re-run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default -j2 --target ring_all_reduce

out=build/default/timelines
mkdir -p "$out" docs/images
REFX_TRACE_FILE="$out/ring_all_reduce.json" REFX_DOT_FILE="$out/ring_all_reduce.dot" \
  build/default/examples/ring_all_reduce

# Debian's matplotlib lives with /usr/bin/python3; another python3 may come first on PATH.
python=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "import matplotlib" 2>/dev/null; then
    python="$candidate"
    break
  fi
done
if [[ -z "$python" ]]; then
  echo "render_docs_images.sh: no python3 with matplotlib (scripts/setup.sh installs python3-matplotlib)" >&2
  exit 1
fi

# Launch 2: the first of the example's timed calls (launch 1 also checks the result).
"$python" scripts/render_timeline.py "$out/ring_all_reduce.json" docs/images/ring_all_reduce_timeline.png --launch 2
dot -Tpng -Gdpi=64 "$out/ring_all_reduce.dot" -o docs/images/ring_all_reduce_graph.png
echo "render_docs_images.sh: wrote docs/images/ring_all_reduce_timeline.png and docs/images/ring_all_reduce_graph.png"
