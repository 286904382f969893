# The book and its checks. Every target creates and uses its own virtual environment (.venv).
#   make book                          build the HTML book into _build/html
#   make test                          every check, in order, stopping at the first failure; the unit tests
#                                      and nbval run twice, the second time under another CPU profile
#   make notebook CH=chapters/01_open_book.md   regenerate and re-execute one chapter's notebook
#   make notebooks                     the same for every chapter
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg --color=no
# The second CPU profile (tools/cpu_profile.py): another BLAS kernel, one thread, numpy without AVX-512.
PROFILE2 = env $$($(BIN)/python tools/cpu_profile.py --env)

.PHONY: book test unit pairs nbval build notebook notebooks clean

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . -W -n --keep-going

test: $(STAMP)
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory pairs
	@$(MAKE) --no-print-directory nbval
	@$(MAKE) --no-print-directory build

unit: $(STAMP)
	@echo "== 1/4 unit and property tests of ragbook, on this machine as it is"
	@$(BIN)/python tools/cpu_profile.py --show
	$(BIN)/pytest tests -q
	@echo "== 1/4 the same tests under the second CPU profile"
	@$(PROFILE2) $(BIN)/python tools/cpu_profile.py --show --expect-profile
	$(PROFILE2) $(BIN)/pytest tests -q

pairs: $(STAMP)
	@echo "== 2/4 every chapters/*.md regenerates exactly its committed .ipynb"
	@PATH=$(abspath $(BIN)):$$PATH sh tools/check_pairs.sh

nbval: $(STAMP)
	@echo "== 3/4 nbval: every chapter re-executed in a fresh kernel, outputs compared, on this machine as it is"
	@$(BIN)/python tools/cpu_profile.py --show
	$(BIN)/pytest $(NBVAL) chapters -q
	@echo "== 3/4 nbval again under the second CPU profile: the stored outputs must hold there too"
	@$(PROFILE2) $(BIN)/python tools/cpu_profile.py --show --expect-profile
	$(PROFILE2) $(BIN)/pytest $(NBVAL) chapters -q

build: $(STAMP)
	@echo "== 4/4 the book builds with warnings as errors"
	rm -rf _build/html
	$(BIN)/jupyter-book build . -W -n --keep-going

notebook: $(STAMP)
	@test -n "$(CH)" || { echo "usage: make notebook CH=chapters/NN_name.md"; exit 2; }
	PATH=$(abspath $(BIN)):$$PATH sh tools/make_notebook.sh $(CH)

notebooks: $(STAMP)
	for f in chapters/*.md; do PATH=$(abspath $(BIN)):$$PATH sh tools/make_notebook.sh $$f || exit 1; done

clean:
	rm -rf _build
