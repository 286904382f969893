# The book and its checks. Every target creates and uses its own virtual environment (.venv).
#   make book                          build the instructor's edition (with solutions) into _build/html
#   make student                       build the student edition, every solution removed: the site into
#                                      _build/student/html, the notebooks into _build/student/notebooks
#   make test                          every check, in order, stopping at the first failure; the unit tests
#                                      and nbval run twice, the second time under another CPU profile
#   make browser                       open every page of _build/html in headless Chromium, offline
#                                      (installs Debian's chromium when it is missing and you are root)
#   make binder-check                  a fresh Python 3.11 environment from requirements.txt only, as Binder
#                                      builds it, runs chapter 1
#   make llm                           install the language-model runtime (llama-cpp-python, built once per
#                                      CPU type and cached) and the book's two models into .venv
#   make records                       every recorded generation made anew: delete the records, re-execute
#                                      every chapter that uses the model
#   make notebook CH=chapters/01_open_book.md   regenerate and re-execute one chapter's notebook
#   make notebooks                     the same for every chapter
#   make format                        format the Python code with ruff (line length in pyproject.toml)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LLM    := $(VENV)/.llm-installed
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg --color=no
# The second CPU profile (tools/cpu_profile.py): another BLAS kernel, one thread, numpy without AVX-512.
PROFILE2 = env $$($(BIN)/python tools/cpu_profile.py --env)
CHROMIUM ?= /usr/bin/chromium

.PHONY: format book student test unit pairs nbval replay build browser chromium student-check binder-check llm records notebook notebooks clean

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

$(LLM): $(STAMP) requirements-llm.txt tools/install_llm.sh
	sh tools/install_llm.sh $(BIN)/python
	touch $(LLM)

llm: $(LLM)

records: $(LLM)
	PATH=$(abspath $(BIN)):$$PATH CELL_TIMEOUT=3600 $(BIN)/python tools/llm_records.py regenerate

format: $(STAMP)
	$(BIN)/ruff format .

book: $(STAMP)
	$(BIN)/jupyter-book build . -W -n --keep-going

student: $(STAMP)
	$(BIN)/python tools/student_edition.py --out _build/student

test: $(STAMP) $(LLM)
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory pairs
	@$(MAKE) --no-print-directory nbval
	@$(MAKE) --no-print-directory replay
	@$(MAKE) --no-print-directory build
	@$(MAKE) --no-print-directory browser
	@$(MAKE) --no-print-directory student-check
	@$(MAKE) --no-print-directory binder-check

# The live language-model tests run in the first pass only: the second profile changes numpy's and
# OpenBLAS's kernels, which llama.cpp does not use.
unit: $(STAMP) $(LLM)
	@echo "== 1/8 every Python line within the line length (pyproject.toml), formatted by ruff"
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@echo "== 1/8 unit and property tests of ragbook, on this machine as it is (the real model included)"
	@$(BIN)/python tools/cpu_profile.py --show
	RAGBOOK_REQUIRE_LLM=1 $(BIN)/pytest tests -q
	@echo "== 1/8 the same tests under the second CPU profile"
	@$(PROFILE2) $(BIN)/python tools/cpu_profile.py --show --expect-profile
	$(PROFILE2) $(BIN)/pytest tests -q -m "not live"

pairs: $(STAMP)
	@echo "== 2/8 every chapters/*.md regenerates exactly its committed .ipynb"
	@PATH=$(abspath $(BIN)):$$PATH sh tools/check_pairs.sh

nbval: $(STAMP)
	@echo "== 3/8 nbval: every chapter re-executed in a fresh kernel, outputs compared, on this machine as it is"
	@echo "   (generations replayed from ragbook/data/generations/; a request without a record fails)"
	@$(BIN)/python tools/cpu_profile.py --show
	RAGBOOK_LLM_RECORDS=only $(BIN)/pytest $(NBVAL) chapters -q
	@echo "== 3/8 nbval again under the second CPU profile: the stored outputs must hold there too"
	@$(PROFILE2) $(BIN)/python tools/cpu_profile.py --show --expect-profile
	RAGBOOK_LLM_RECORDS=only $(PROFILE2) $(BIN)/pytest $(NBVAL) chapters -q

replay: $(LLM)
	@echo "== 4/8 the records are the model's: a fixed sample of 20 generations and 5 structured replies made again, compared byte for byte"
	$(BIN)/python tools/llm_records.py check --sample 20 --structured-sample 5 --minimum 0.95

build: $(STAMP)
	@echo "== 5/8 the book builds with warnings as errors"
	rm -rf _build/html
	$(BIN)/jupyter-book build . -W -n --keep-going

# Chromium from Debian; installed here when it is missing and make runs as root (CI does).
chromium:
	@if [ ! -x "$(CHROMIUM)" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "== Chromium is missing: apt-get update && apt-get install -y chromium"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null || exit 1; \
	    test -x "$(CHROMIUM)" || { echo "apt-get installed chromium, but $(CHROMIUM) is not there" >&2; exit 1; }; \
	  else \
	    echo "make browser needs Chromium at $(CHROMIUM). Install it as root with" >&2; \
	    echo "    apt-get update && apt-get install -y chromium" >&2; \
	    echo "(or sudo ...), or name another build with CHROMIUM=/path/to/chromium." >&2; \
	    exit 1; \
	  fi; \
	fi

browser: $(STAMP) chromium
	@echo "== 6/8 every page in headless Chromium, served on 127.0.0.1 with every other host blocked"
	@test -f _build/html/intro.html || $(MAKE) --no-print-directory book
	$(BIN)/python tools/browser_check.py --site _build/html --out _build/screenshots --chromium $(CHROMIUM)

student-check: $(STAMP) chromium
	@echo "== 7/8 the student edition: no solution text, every exercise, every graded check grades, the chapters that read project files run in its tree"
	@test -f _build/html/intro.html || $(MAKE) --no-print-directory book
	$(BIN)/python tools/student_edition.py --out _build/student
	$(BIN)/python tools/check_student.py --book _build/html --student _build/student
	$(BIN)/python tools/browser_check.py --site _build/student/html --out _build/screenshots/student --chromium $(CHROMIUM)

binder-check:
	@echo "== 8/8 Binder's environment: a fresh venv of runtime.txt's Python from requirements.txt, chapter 1 in it"
	sh tools/binder_check.sh chapters/01_open_book.ipynb

notebook: $(STAMP)
	@test -n "$(CH)" || { echo "usage: make notebook CH=chapters/NN_name.md"; exit 2; }
	PATH=$(abspath $(BIN)):$$PATH sh tools/make_notebook.sh $(CH)

notebooks: $(STAMP)
	for f in chapters/*.md; do PATH=$(abspath $(BIN)):$$PATH sh tools/make_notebook.sh $$f || exit 1; done

clean:
	rm -rf _build
