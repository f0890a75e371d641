#!/usr/bin/env bash
# A regular (non-editable) install finds its shipped weights: build a fresh venv, `pip install .`
# from this checkout, then solve the demo files from another folder with --model miloop and nds.
#   bash benchmarks/check_install.sh            (about 2-4 minutes: it installs torch and PyVRP)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --upgrade pip
"$work/venv/bin/pip" install -q torch==2.13.0
"$work/venv/bin/pip" install -q "$repo"
cd "$work"
cp "$repo"/data/demo/cvrp-demo-50.vrp "$repo"/data/demo/tsp-demo-50.tsp .
site="$("$work/venv/bin/python" -c 'import routecli, pathlib; print(pathlib.Path(routecli.__file__).parent)')"
case "$site" in "$repo"*) echo "FAIL: routecli imported from the checkout ($site)"; exit 1;; esac
"$work/venv/bin/routecli" solve cvrp-demo-50.vrp --model miloop --threads 1
"$work/venv/bin/routecli" solve tsp-demo-50.tsp --model miloop --threads 1
"$work/venv/bin/routecli" solve cvrp-demo-50.vrp --model nds --iterations 20 --threads 1
echo "OK: non-editable install from $repo solved the demos with its package-data weights ($site)"
