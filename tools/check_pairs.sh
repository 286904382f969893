#!/bin/sh
# Fails when a chapter's .md source and its committed .ipynb disagree (inputs only; outputs are nbval's job).
# It regenerates each notebook from its .md in a scratch copy and compares bytes, so file times do not matter.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for md in chapters/*.md; do
  nb=${md%.md}.ipynb
  if [ ! -f "$nb" ]; then
    echo "MISSING: $md has no notebook $nb. Run: make notebook CH=$md" >&2
    status=1; continue
  fi
  cp "$md" "$nb" "$tmp/"
  (cd "$tmp" && jupytext --quiet --to ipynb --update "${md##*/}")
  if ! cmp -s "$tmp/${nb##*/}" "$nb"; then
    echo "OUT OF DATE: $md was edited but $nb was not regenerated from it." >&2
    echo "  Run: make notebook CH=$md   (then commit both files)" >&2
    diff -u "$nb" "$tmp/${nb##*/}" | head -20 >&2 || true
    status=1
  fi
done
for nb in chapters/*.ipynb; do
  [ -f "${nb%.ipynb}.md" ] || { echo "ORPHAN: $nb has no .md source beside it" >&2; status=1; }
done
[ $status -eq 0 ] && echo "all chapter notebooks match their sources"
exit $status
