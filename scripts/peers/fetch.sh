#!/usr/bin/env bash
# Fetches the peers on THIS machine into .peers/ (ignored by git; never committed), for carrying
# to the GPU machine (scripts/peers/README.md):
#   .peers/mamba_ssm-*.tar.gz, .peers/lrnnx-*.tar.gz   sdists (the releases the goldens pin, sha256-checked)
#   .peers/src/<name>-<version>/                        the sdists unpacked (build_peers.py compiles from here)
#   .peers/wheels/*.whl                                 ejkernel and the pure-Python packages it needs that
#                                                       the GPU machine's image lacks (for Python 3.12)
# Pins come from scripts/goldens/make_goldens.py (PEERS_PINNED), so goldens and timings use one release.
# Already-downloaded artifacts in $SCANLAB_DEPS/peers (make_goldens.py's cache) are reused.
#   scripts/peers/fetch.sh            (PEERS_PYTHON: a python with torch for pip's sdist metadata step,
#                                      default: the goldens venv that make_goldens.py creates; without
#                                      one, the sdist file comes straight from pip's package index)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source "$root/scripts/env.sh"
dest="$root/.peers"
cache="$SCANLAB_DEPS/peers"
mkdir -p "$dest/src" "$dest/wheels"
git -C "$root" check-ignore -q .peers || { echo "fetch.sh: .peers/ is not ignored by git; refusing to fetch into the tree" >&2; exit 1; }

# name version file sha256, one per line, from make_goldens.py
pins=$(python3 - "$root/scripts/goldens/make_goldens.py" <<'PY'
import ast, sys
tree = ast.parse(open(sys.argv[1]).read())
for node in tree.body:
    if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "PEERS_PINNED" for t in node.targets):
        for name, (version, fname, sha) in ast.literal_eval(node.value).items():
            print(name, version, fname, sha)
PY
)
[ -n "$pins" ] || { echo "fetch.sh: no PEERS_PINNED in scripts/goldens/make_goldens.py" >&2; exit 1; }

sdist_python="${PEERS_PYTHON:-$SCANLAB_DEPS/goldens-venv/bin/python}"
while read -r name version fname sha; do
  target="$dest/$fname"
  if [ ! -f "$target" ] && [ -f "$cache/$fname" ]; then cp "$cache/$fname" "$target"; fi
  if [ ! -f "$target" ]; then
    if [[ "$fname" == *.whl ]]; then
      python3 -m pip download -q --no-deps --only-binary=:all: "$name==$version" -d "$dest"
    elif [ -x "$sdist_python" ]; then
      # An sdist's metadata step imports torch (the peers' setup.py do): use a python that has it,
      # without build isolation, and never compile CUDA here.
      MAMBA_SKIP_CUDA_BUILD=TRUE CAUSAL_CONV1D_SKIP_CUDA_BUILD=TRUE \
        "$sdist_python" -m pip download -q --no-deps --no-build-isolation --no-binary "$name" "$name==$version" -d "$dest"
    else
      # No python with torch here: the file itself from the package index pip uses (its simple
      # API, PEP 503), without running setup.py; the sha256 check below is the same either way.
      python3 - "$name" "$fname" "$target" <<'PY'
import re, sys, urllib.parse, urllib.request
from pip._internal.models.index import PyPI
name, fname, target = sys.argv[1:]
page_url = PyPI.simple_url.rstrip("/") + "/" + re.sub(r"[-_.]+", "-", name).lower() + "/"
page = urllib.request.urlopen(page_url, timeout=120).read().decode()
for href in re.findall(r'href="([^"]+)"', page):
    if urllib.parse.unquote(href.split("#")[0].rsplit("/", 1)[-1]) == fname:
        urllib.request.urlretrieve(urllib.parse.urljoin(page_url, href.split("#")[0]), target)
        break
else:
    sys.exit(f"fetch.sh: {fname} is not in the package index's list of {name} files")
PY
    fi
  fi
  got=$(sha256sum "$target" | cut -d' ' -f1)
  [ "$got" = "$sha" ] || { echo "fetch.sh: sha256 of $fname is $got, pinned $sha" >&2; exit 1; }
  if [[ "$fname" == *.tar.gz ]]; then
    unpacked="$dest/src/${fname%.tar.gz}"
    [ -d "$unpacked" ] || tar -xzf "$target" -C "$dest/src"
  else
    cp "$target" "$dest/wheels/"
  fi
  echo "fetch.sh: $name $version ok"
done <<< "$pins"

# ejkernel's imports that the GPU machine's image (Python 3.12) lacks; versions as in the goldens venv.
wheels=(beartype==0.23.1 pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5
        typing-extensions==4.16.0)
for w in "${wheels[@]}"; do
  stem="${w%%==*}"; stem="${stem//-/_}"
  if ls "$dest/wheels/${stem}-${w##*==}-"*.whl >/dev/null 2>&1; then continue; fi
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform any -d "$dest/wheels" "$w"
done
echo "fetch.sh: .peers holds $(du -sh "$dest" | cut -f1): $(ls "$dest/wheels" | wc -l) wheels, $(ls "$dest/src" | wc -l) sources"
