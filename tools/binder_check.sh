#!/bin/sh
# What Binder does with this repository, here: a fresh virtual environment of the Python that runtime.txt
# names, `pip install -r requirements.txt` and nothing else, then one chapter executed in it with nbval.
# usage: tools/binder_check.sh [chapters/01_open_book.ipynb]   (BINDER_PYTHON overrides the interpreter)
set -eu
chapter=${1:-chapters/01_open_book.ipynb}
runtime=$(cat runtime.txt)                       # python-3.11
python=${BINDER_PYTHON:-python${runtime#python-}}
command -v "$python" >/dev/null || { echo "binder-check needs $python (runtime.txt says $runtime)" >&2; exit 2; }
venv=_build/binder/venv
start=$(date +%s)
rm -rf _build/binder
"$python" -m venv "$venv"
# PYTHONPATH would let a checkout's ragbook in; the Binder environment has only what requirements.txt installs.
env -u PYTHONPATH "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements.txt
env -u PYTHONPATH "$venv/bin/python" -m pip check
installed=$(date +%s)
echo "binder-check: $("$venv/bin/python" --version) environment from requirements.txt in $((installed - start)) s"
env -u PYTHONPATH "$venv/bin/python" -m pytest -p no:cacheprovider --nbval --nbval-current-env \
  --nbval-sanitize-with tests/nbval_sanitize.cfg --color=no -q "$chapter"
echo "binder-check: $chapter ran and matched its stored outputs; $(($(date +%s) - start)) s in all"
