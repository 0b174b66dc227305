#!/usr/bin/env bash
# Installs the Debian packages refx needs to build, test, run examples and
# benchmarks. Idempotent: does nothing (no apt-get at all) when every package
# is already installed. Runs apt-get directly as root, through sudo otherwise.
set -euo pipefail

# Add new build/test dependencies here.
PACKAGES=(
  g++
  cmake
  ninja-build
  libfmt-dev
  librange-v3-dev
  libeigen3-dev       # the GEMM behind dot (include/refx/ir/gemm.hpp)
  libgtest-dev
  libbenchmark-dev
  libtbb-dev
  graphviz            # dot: renders REFX_DOT_FILE graphs (scripts/render_docs_images.sh)
  python3-matplotlib  # scripts/render_timeline.py
  openmpi-bin         # mpirun: the MPI transport's tests (label mpi) and bench/mpi_collectives
  libopenmpi-dev      # refx::mpi (REFX_WITH_MPI)
  clang-15            # the libFuzzer build (preset "fuzz"); libFuzzer comes with it (libclang-common-15-dev)
  clang-format-15     # scripts/format.sh and ctest format.check (.clang-format)
)

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "setup.sh: not a Debian-based system; make sure these are installed: ${PACKAGES[*]}" >&2
  exit 0
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup.sh: all ${#PACKAGES[@]} required packages are installed"
  exit 0
fi

if ((EUID == 0)); then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  echo "setup.sh: missing packages (${missing[*]}) and not root, and sudo is not available" >&2
  exit 1
fi

echo "setup.sh: installing: ${missing[*]}"
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 \
  install -y --no-install-recommends "${missing[@]}"
