#!/usr/bin/env bash
# Installs everything scanlab needs on a fresh Debian bookworm machine, idempotently.
#   scripts/setup.sh [cpu] [cuda] [python]   (default: cpu python)
# cpu:    Debian packages, static Google Benchmark, Kokkos Serial+OpenMP
# cuda:   Kokkos Serial+OpenMP+CUDA (sm_90), built with nvcc_wrapper; needs nvcc, no GPU
# python: a venv with numpy and matplotlib for reports and the exec example, and NVIDIA's
#         cuobjdump and nvdisasm wheels for reports/sass_lines.py (no CUDA toolkit here ships them)
# Builds land under $SCANLAB_DEPS keyed by version, patch and flags (scripts/env.sh); a finished
# build leaves a stamp, so a second run only checks stamps and takes well under a second.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

want_cpu=0 want_cuda=0 want_python=0 quiet=0
for a in "$@"; do
  case "$a" in
    cpu) want_cpu=1 ;; cuda) want_cuda=1 ;; python) want_python=1 ;;
    -q|--quiet) quiet=1 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup.sh: unknown argument '$a' (expected cpu, cuda, python, --quiet)" >&2; exit 2 ;;
  esac
done
if [ $((want_cpu + want_cuda + want_python)) -eq 0 ]; then want_cpu=1; want_python=1; fi

say() { [ "$quiet" = 1 ] || echo "[setup] $*"; }
jobs_n=$(nproc)
mkdir -p "$SCANLAB_DEPS/src"

apt_packages=(cmake ninja-build g++ make patch python3 librapidcheck-dev libgtest-dev libgmock-dev
              nlohmann-json3-dev libcli11-dev libopenblas-dev openmpi-bin)
ensure_apt() {
  local missing=()
  for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing Debian packages: ${missing[*]}"
  local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Source packages come through apt with a private deb-src list, whose mirror is read from this
# machine's own apt configuration; the system's apt state is left untouched.
fetch_debian_source() {  # $1 = source package, $2 = destination directory
  local pkg="$1" dest="$2" aptdir="$SCANLAB_DEPS/src/apt"
  mkdir -p "$aptdir/lists/partial" "$dest"
  local mirror; mirror=$("$SCANLAB_ROOT/scripts/apt-mirror.sh")
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror bookworm main" > "$aptdir/sources.list"
  local opts=(-o "Dir::Etc::SourceList=$aptdir/sources.list" -o Dir::Etc::SourceParts=/dev/null
              -o "Dir::State::Lists=$aptdir/lists" -o APT::Sandbox::User=root)
  apt-get "${opts[@]}" update -qq
  (cd "$dest" && apt-get "${opts[@]}" source --download-only -qq "$pkg")
}

build_benchmark() {
  [ -f "$SCANLAB_BENCHMARK/.scanlab-stamp" ] && return 0
  say "building static Google Benchmark $SCANLAB_BENCHMARK_VERSION -> $SCANLAB_BENCHMARK"
  local src="$SCANLAB_DEPS/src/benchmark"
  ls "$src"/benchmark_"$SCANLAB_BENCHMARK_VERSION".orig.tar.* >/dev/null 2>&1 || fetch_debian_source benchmark "$src"
  local work; work=$(mktemp -d "$SCANLAB_DEPS/src/benchmark-build.XXXX")
  tar -xf "$src"/benchmark_"$SCANLAB_BENCHMARK_VERSION".orig.tar.* -C "$work" --strip-components=1
  # shellcheck disable=SC2086
  cmake -S "$work" -B "$work/build" -G Ninja $SCANLAB_BENCHMARK_FLAGS -DCMAKE_INSTALL_PREFIX="$SCANLAB_BENCHMARK" > "$work/configure.log"
  cmake --build "$work/build" -j "$jobs_n" > "$work/build.log"
  cmake --install "$work/build" > /dev/null
  touch "$SCANLAB_BENCHMARK/.scanlab-stamp"
  rm -rf "$work"
}

kokkos_source() {  # prints the patched source tree, extracting packages/kokkos from trilinos once
  local src="$SCANLAB_DEPS/src/trilinos" tree
  tree="$SCANLAB_DEPS/src/kokkos-$SCANLAB_KOKKOS_VERSION-$(sha256sum "$SCANLAB_KOKKOS_PATCH" | cut -c1-12)"
  if [ ! -f "$tree/.scanlab-stamp" ]; then
    ls "$src"/trilinos_*.orig.tar.* >/dev/null 2>&1 || fetch_debian_source trilinos "$src" >&2
    rm -rf "$tree" "$tree.tmp"; mkdir -p "$tree.tmp"
    tar -xf "$src"/trilinos_*.orig.tar.* -C "$tree.tmp" --wildcards '*/packages/kokkos/*' --strip-components=3
    grep -q "tag:  $SCANLAB_KOKKOS_VERSION " "$tree.tmp/master_history.txt" \
      || { echo "setup.sh: trilinos' packages/kokkos is not Kokkos $SCANLAB_KOKKOS_VERSION" >&2; exit 1; }
    (cd "$tree.tmp" && patch -p1 -s < "$SCANLAB_KOKKOS_PATCH")
    touch "$tree.tmp/.scanlab-stamp"; mv "$tree.tmp" "$tree"
  fi
  echo "$tree"
}

build_kokkos() {  # $1 = openmp|cuda
  local flavour="$1" prefix extra=()
  if [ "$flavour" = cuda ]; then prefix="$SCANLAB_KOKKOS_CUDA"; else prefix="$SCANLAB_KOKKOS_OPENMP"; fi
  [ -f "$prefix/.scanlab-stamp" ] && return 0
  local tree; tree=$(kokkos_source)
  say "building Kokkos $SCANLAB_KOKKOS_VERSION ($flavour) -> $prefix"
  if [ "$flavour" = cuda ]; then
    command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] \
      || { echo "setup.sh: the cuda build needs nvcc (CUDA 13) on PATH or in /usr/local/cuda/bin" >&2; exit 1; }
    command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
    # shellcheck disable=SC2206
    extra=($SCANLAB_KOKKOS_FLAGS_CUDA -DCMAKE_CXX_COMPILER="$tree/bin/nvcc_wrapper")
  fi
  local work; work=$(mktemp -d "$SCANLAB_DEPS/src/kokkos-build.XXXX")
  # shellcheck disable=SC2086
  cmake -S "$tree" -B "$work" -G Ninja $SCANLAB_KOKKOS_FLAGS_COMMON "${extra[@]}" \
        -DCMAKE_INSTALL_PREFIX="$prefix" > "$work/configure.log" \
    || { cat "$work/configure.log" >&2; exit 1; }
  cmake --build "$work" -j "$jobs_n" > "$work/build.log" || { tail -50 "$work/build.log" >&2; exit 1; }
  cmake --install "$work" > /dev/null
  touch "$prefix/.scanlab-stamp"
  rm -rf "$work"
}

ensure_venv() {
  [ -f "$SCANLAB_VENV/.scanlab-stamp" ] && return 0
  say "creating Python venv -> $SCANLAB_VENV"
  rm -rf "$SCANLAB_VENV"
  python3 -m venv "$SCANLAB_VENV"
  "$SCANLAB_VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$SCANLAB_ROOT/scripts/requirements.txt"
  touch "$SCANLAB_VENV/.scanlab-stamp"
}

ensure_apt
if [ "$want_cpu" = 1 ]; then build_benchmark; build_kokkos openmp; fi
if [ "$want_cuda" = 1 ]; then build_benchmark; build_kokkos cuda; fi
if [ "$want_python" = 1 ]; then ensure_venv; fi
say "dependencies ready under $SCANLAB_DEPS"
