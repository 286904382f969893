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
  --ExecutePreprocessor.record_timing=False --ExecutePreprocessor.timeout=${CELL_TIMEOUT:-300} "$nb"
# A cell's printed output can arrive in several stream messages, split wherever the kernel flushed;
# merge consecutive pieces so that a re-run with the same code stores the same bytes. A progress
# line rewritten in place (ragbook.progress: "\r... 160 of 377") keeps only its last state, as a
# terminal shows it and as nbval compares it, so the stored text does not depend on timing.
python - "$nb" <<'PY'
import re
import sys
import nbformat
path = sys.argv[1]
notebook = nbformat.read(path, as_version=4)
for cell in notebook.cells:
    merged = []
    for output in cell.get("outputs", []):
        if (output.output_type == "stream" and merged and merged[-1].output_type == "stream"
                and merged[-1].name == output.name):
            merged[-1].text += output.text
        else:
            merged.append(output)
    for output in merged:
        if output.output_type == "stream":
            output.text = re.sub(r".*\r(?=[^\n])", "", output.text)
    if "outputs" in cell:
        cell.outputs = merged
nbformat.write(notebook, path)
PY
echo "regenerated and executed $nb"
