#!/bin/sh
# Regenerate a chapter's notebook from its MyST source and execute it in place, byte-stable.
# usage: tools/make_notebook.sh chapters/NN_name.md
set -eu
md=$1
case "$md" in *.md) ;; *) echo "expected a chapters/*.md file, got $md" >&2; exit 2;; esac
[ -f "$md" ] || { echo "no such chapter source: $md" >&2; exit 2; }
nb=${md%.md}.ipynb
if [ -f "$nb" ]; then
  jupytext --quiet --to ipynb --update "$md"
else
  jupytext --quiet --from md:myst --to ipynb "$md"
fi
jupyter nbconvert --log-level=WARN --to notebook --execute --inplace \
  --ExecutePreprocessor.record_timing=False --ExecutePreprocessor.coalesce_streams=True \
  --ExecutePreprocessor.timeout=300 "$nb"
echo "regenerated and executed $nb"
