# workrex - see README.md. `make run` builds and opens the dashboard (installing
# missing build dependencies first); `make test` runs every test.

CC      ?= cc
NPROC   := $(shell nproc 2>/dev/null || echo 2)
PKGS    := ncursesw vterm libuv yaml-0.1 json-c libgit2 libwebsockets libqrencode
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
WARN    := -Wall -Wextra -Wshadow -Wno-unused-parameter
CFLAGS  ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -D_XOPEN_SOURCE_EXTENDED $(WARN) $(PKG_CFLAGS)
ifeq ($(CI),true)
ALL_CFLAGS += -Werror
endif
ALL_CFLAGS += $(CFLAGS)
# certs.c replaces mbedTLS's certificate loaders for libgit2: export them so
# the dynamic linker binds libgit2's calls to ours.
# wcwidth.c's wcwidth and iswprint (Unicode 15) likewise replace the C
# library's for ncurses.
LIBS    := $(PKG_LIBS) -lutil -Wl,--export-dynamic-symbol=mbedtls_x509_crt_parse_file \
	   -Wl,--export-dynamic-symbol=mbedtls_x509_crt_parse_path \
	   -Wl,--export-dynamic-symbol=wcwidth -Wl,--export-dynamic-symbol=iswprint

BUILD   ?= build
# The sandbox client: libc and json-c only, linked statically (see src/guest/main.c);
# never with sanitizers, which cannot link statically.
GUEST_SRC := src/guest/main.c src/guest/forward.c src/guest/hostbox.c src/guest/firewall.c src/cmd/cmd_rpc.c src/rpc/proto.c src/rpc/status.c src/util/util.c
GUEST   := $(BUILD)/workrex-guest


SRC     := $(shell find src -name '*.c' -not -path 'src/guest/*' -not -path src/keeper/bin.c \
	     -not -path src/server.c -not -path src/remote/nogss.c -not -path src/git/init_static.c | sort)
# Files from assets/ compiled in as C strings (src/backends/assets.h).
GEN_C   := $(BUILD)/gen/assets.c
OBJ     := $(SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/assets.o
LIBOBJ  := $(filter-out $(BUILD)/src/main.o,$(OBJ))
BIN     := $(BUILD)/workrex
# The keeper as a program of its own (src/keeper/bin.c): what a keeper runs
# and nothing else, linked statically (the C library too), so that each
# agent's keepers cost little more than their screens: an idle one has
# 1.5 MB resident, not 2.1, most of it the C library's pages that the
# dynamic one maps whole. Sanitizers cannot link statically: with them
# the C library stays shared.
KEEPER  := $(BUILD)/workrex-keeper
KEEPER_OBJ := $(patsubst %,$(BUILD)/src/%.o,keeper/bin keeper/keeper keeper/mark keeper/proto keeper/sync \
	term/pane term/pty term/screen term/scrollback term/vtfilter term/wcwidth term/width term/colour \
	rpc/server rpc/status rpc/proto rpc/control net/proxy net/portfwd net/spec net/head net/hostname \
	util/util util/log util/beneath util/json util/fault)
ifneq (,$(findstring -fsanitize,$(LDFLAGS)))
KEEPER_LIBS := -Wl,-Bstatic -lvterm -luv_a -ljson-c -Wl,-Bdynamic -lutil -lpthread -ldl -lrt
else
KEEPER_LIBS := -static -lvterm -luv_a -ljson-c -lutil -lpthread -ldl -lrt
endif
# glibc warns of getaddrinfo (the proxy's) and getpwuid_r (libuv's, never
# called) in a static program. Both work: this glibc's files and dns
# lookups are built in, and another NSS module is loaded from this same
# glibc's. Those two warnings are left out; anything else the link says is
# shown.
KEEPER_LD_QUIET := -e "in function .uv__getpwuid_r" -e "in function .uv__getaddrinfo_work" \
	-e "in statically linked applications requires at runtime"

# What a server runs of workrex (src/server.c) as one static program,
# copied there by the link: the link's end, keepers, and the guest client
# for its panes, so that a server needs a kernel, ssh and git and no
# library of ours. Everything is linked statically (GSS-API stand-ins for
# libgit2's Negotiate, which no static Kerberos exists for; libgit2 starts
# without certs.c's loaders). Sanitizers cannot link statically, and a
# server has none of our libraries: a sanitizer build makes it as the
# plain build does, in a directory of its own, like the guest.
SERVER  := $(BUILD)/workrex-server
SERVER_OBJ := $(filter $(BUILD)/src/util/% $(BUILD)/src/term/% $(BUILD)/src/rpc/% $(BUILD)/src/net/% \
	$(BUILD)/src/config/% $(BUILD)/src/keeper/% $(BUILD)/src/git/% $(BUILD)/src/backends/% \
	$(BUILD)/src/remote/%,$(OBJ)) \
	$(BUILD)/gen/assets.o
SERVER_OBJ := $(filter-out $(BUILD)/src/git/certs.o,$(SERVER_OBJ)) \
	$(BUILD)/server/server.o $(patsubst %,$(BUILD)/server/%.o,remote/nogss git/init_static guest/main guest/forward \
	guest/hostbox guest/firewall cmd/cmd_rpc)
SERVER_PKGS := libgit2 libssh2 yaml-0.1 json-c
SERVER_LIBS := -static $(shell pkg-config --static --libs $(SERVER_PKGS) 2>/dev/null) -lvterm -luv_a \
	-lutil -lpthread -ldl -lrt
SERVER_LD_QUIET := $(KEEPER_LD_QUIET) -e "in function .uv__getpwuid_r" -e "getpwnam\|getgrnam\|getpwuid\|dlopen" \
	-e "in function"

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

FORCE:

.PHONY: all deps test-deps run test check fresh-test soak-seeds fuzz-smoke unit e2e crash-test faults net-test sandbox-test asan soak soak-run fuzz bench format widths \
	format-check check-layers clean guest man \
	install uninstall

all: $(BIN) $(GUEST) $(KEEPER) $(SERVER)

guest: $(GUEST)

$(GUEST): $(GUEST_SRC) $(wildcard src/cmd/cmd_rpc.h src/rpc/proto.h src/rpc/status.h src/util/util.h)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) $(if $(filter true,$(CI)),-Werror) -O2 -g -static \
		-o $@ $(GUEST_SRC) $(shell pkg-config --static --libs json-c)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# Each file a C string: its name, then the file.
WEB_ASSETS := asset_web_index:assets/web/index.html asset_web_js:assets/web/app.js \
	asset_web_css:assets/web/app.css
$(GEN_C): assets/Dockerfile.sandbox $(foreach a,$(WEB_ASSETS),$(lastword $(subst :, ,$(a))))
	@mkdir -p $(dir $@)
	@{ echo '/* Generated by the Makefile from assets/; do not edit. */'; \
	  for a in asset_dockerfile:assets/Dockerfile.sandbox $(WEB_ASSETS); do \
	    echo "const char $${a%%:*}[] ="; \
	    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' "$${a#*:}"; \
	    echo ';'; \
	  done; } >$@

$(BUILD)/gen/assets.o: $(GEN_C)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BIN): $(OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $(OBJ) $(LDFLAGS) $(LIBS)

$(BUILD)/server/guest/main.o: src/guest/main.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Dmain=guest_main -MMD -MP -c -o $@ $<

$(BUILD)/server/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

ifneq (,$(findstring -fsanitize,$(LDFLAGS)))
$(SERVER): FORCE
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/plain CC=cc CFLAGS="-O2 -g" LDFLAGS= \
		$(BUILD)/plain/workrex-server
	@cp $(BUILD)/plain/workrex-server $@
else
$(SERVER): $(SERVER_OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $(SERVER_OBJ) $(LDFLAGS) $(SERVER_LIBS) 2>$@.ld || { cat $@.ld >&2; exit 1; }
	@grep -v $(SERVER_LD_QUIET) $@.ld >&2 || true; rm -f $@.ld
endif

$(KEEPER): $(KEEPER_OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $(KEEPER_OBJ) $(LDFLAGS) $(KEEPER_LIBS) 2>$@.ld || { cat $@.ld >&2; exit 1; }
	@grep -v $(KEEPER_LD_QUIET) $@.ld >&2 || true; rm -f $@.ld

$(BUILD)/libworkrex.a: $(LIBOBJ)
	@rm -f $@
	ar rcs $@ $(LIBOBJ)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libworkrex.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc -o $@ $< $(BUILD)/libworkrex.a $(LDFLAGS) $(LIBS) -lcmocka -lpthread

deps:
	@scripts/deps.sh

test-deps:
	@scripts/deps.sh --test

run: deps
	@$(MAKE) --no-print-directory all
	./$(BIN)

unit: $(UNIT_BIN)
	@fail=0; for t in $(UNIT_BIN); do $$t || fail=1; done; exit $$fail

e2e: $(BIN) $(GUEST) $(KEEPER)
	@WORKREX=$(abspath $(BIN)) WORKREX_GUEST=$(abspath $(GUEST)) tests/e2e/run.sh

# The network proxy against real sockets in namespaces of its own (root).
net-test: $(BIN) $(KEEPER)
	@WORKREX=$(abspath $(BIN)) tests/net/run.sh

# Real podman (runc) with the tests' own image; see tests/sandbox/run.sh.
# SANDBOX_RUNTIME=gvisor: every case under sandbox.runtime: gvisor (runsc),
# as make test runs them (make asan's under runc).
SANDBOX_RUNTIME ?=
sandbox-test: $(BIN) $(GUEST) $(KEEPER)
	@WORKREX=$(abspath $(BIN)) WORKREX_GUEST=$(abspath $(GUEST)) \
		WORKREX_TEST_RUNTIME=$(SANDBOX_RUNTIME) tests/sandbox/run.sh

# Every suite runs, whichever fails: one that cannot run here (the sandbox
# suite in a container without nested podman) says why, the others report.
# The builds first, on every core; then every suite side by side
# (scripts/suites.sh), the files of the e2e, crash, net and sandbox suites
# sharing TEST_JOBS places.
# TEST_SMOKE=1 runs one file of each suite (tests/smoke), as fresh-test does.
test: test-deps
	@$(MAKE) --no-print-directory -j$(NPROC) all faults $(UNIT_BIN) $(FUZZERS)
	@SUITE_MAKE_ARGS='SANDBOX_RUNTIME=gvisor' scripts/suites.sh test check-layers format-check unit e2e \
		crash-test net-test sandbox-test fuzz-smoke soak-seeds

# The tier for after each change, in a few minutes: the checks, the unit
# tests, and the e2e files that touch what changed since main (or since
# CHECK_BASE), else a fixed quick set (tests/smoke), side by side.
check: test-deps
	@$(MAKE) --no-print-directory -j$(NPROC) all $(UNIT_BIN)
	@TEST_ONLY="$$(scripts/check-files.sh $(CHECK_BASE))" scripts/suites.sh check check-layers format-check unit e2e

# The width table (src/term/width_table.h), made again from the Unicode data
# files of Debian's unicode-data.
widths:
	@python3 scripts/widths.py >$(BUILD)/width_table.h && mv $(BUILD)/width_table.h src/term/

# workrex.yaml(5)'s KEY REFERENCE, written from the key table (src/config/table.c).
man: $(BIN)
	@scripts/man-keys.sh ./$(BIN)

# The README's two commands on a Debian 12 root with nothing but git
# (debootstrap minbase, in podman): the first opens the dashboard, the
# second runs one test file of each suite there, nested (TEST_SMOKE=1).
fresh-test: $(BIN)
	@WORKREX=$(abspath $(BIN)) tests/fresh/run.sh

# AddressSanitizer + UBSan build of everything, then the whole suite on it:
# the crash tests too, and a five-minute soak; its sandbox suite runs under
# runc, make test's under gVisor, so that both runtimes run every case
# (gVisor's in the round without sanitizers: under both, on a busy
# machine, the suite took 13:22 against 10:47 and slowed every other).
ASAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
ASAN_LDFLAGS := -fsanitize=address,undefined
ASAN_UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=build-asan/tests/%)
ASAN_MAKE := $(MAKE) --no-print-directory BUILD=build-asan CC=clang \
	CFLAGS="$(ASAN_CFLAGS)" LDFLAGS="$(ASAN_LDFLAGS)"
# The builds first, on every core; then the suites side by side as in
# make test, their files sharing ASAN_JOBS places (each costs two to three
# times the CPU here), the five-minute soak beside them. (Run one after
# another when a look at the screen forked five processes, three files and
# both soaks at once put the load at 13 on 2 cores; a look forks one now.)
ASAN_JOBS ?= 3
ASAN_SUITES ?= unit e2e crash-test net-test sandbox-test soak-run
asan:
	@$(ASAN_MAKE) -j$(NPROC) all faults $(ASAN_UNIT_BIN)
	@TEST_JOBS=$(ASAN_JOBS) SUITE_MAKE_ARGS='BUILD=build-asan CC=clang CFLAGS="$(ASAN_CFLAGS)" LDFLAGS="$(ASAN_LDFLAGS)" SOAK_MINUTES=5 CRASH_QUICK=1' \
		scripts/suites.sh asan $(ASAN_SUITES)

# Twenty stand-in agents and random operations, kills included, for
# SOAK_MINUTES on the sanitizer build; the invariants after each (tests/soak).
SOAK_MINUTES ?= 30
SEEDS_MINUTES ?= 3
soak:
	@$(ASAN_MAKE) soak-run SOAK_MINUTES=$(SOAK_MINUTES)
# A seed is printed first; SOAK_SEED= runs that one again. A seed that
# ever failed goes into tests/soak/seeds, which make test replays each
# time (soak-seeds), each to the operation it failed at and a little past
# it, within SEEDS_MINUTES in all, on the build without sanitizers: the
# seeds so far failed on logic, not memory, and a minute of replay there
# reaches more operations for less CPU than beside make asan (in CI's
# busy round, 73 of seed 1796530442's in about 2 minutes, against 96 in
# 5 under ASan; 185 in 1.5 minutes on an idle machine).
soak-run: all
	@python3 tests/soak/soak.py --workrex $(abspath $(BIN)) --minutes $(SOAK_MINUTES) --agents 20 \
		$(if $(SOAK_SEED),--seed $(SOAK_SEED))
soak-seeds: all
	@python3 tests/soak/soak.py --workrex $(abspath $(BIN)) --agents 20 --minutes $(SEEDS_MINUTES) \
		--replay tests/soak/seeds

FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_SECONDS ?= 60
FUZZ_OBJ := $(patsubst %.c,$(BUILD)/fuzzobj/%.o,$(filter-out src/main.c,$(SRC))) $(BUILD)/gen/assets.o
.SECONDARY: $(FUZZ_OBJ)
# A fuzzer links every source; with TEST_SMOKE only those of the src/
# directories it includes and util/ (fuzz_rpc: rpc/ and util/, not the
# hundred files compiled again with the fuzzer's instrumentation).
fuzz_obj = $(if $(TEST_SMOKE),$(filter $(patsubst %,$(BUILD)/fuzzobj/src/%/%,util \
	$(shell sed -n 's|^\#include "\([a-z]*\)/.*|\1|p' tests/fuzz/$(1).c)),$(FUZZ_OBJ)),$(FUZZ_OBJ))
.SECONDEXPANSION:
$(BUILD)/fuzz/%: tests/fuzz/%.c $$(call fuzz_obj,$$*)
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -std=c11 -D_GNU_SOURCE $(PKG_CFLAGS) -Isrc -o $@ $^ $(LIBS)

$(BUILD)/fuzzobj/%.o: %.c
	@mkdir -p $(dir $@)
	clang -O1 -g -fsanitize=fuzzer-no-link,address,undefined -std=c11 -D_GNU_SOURCE -D_XOPEN_SOURCE_EXTENDED $(WARN) $(PKG_CFLAGS) -c -o $@ $<

FUZZERS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
# TEST_SMOKE=1: the fuzzers tests/smoke names, built and run (fresh-test).
ifdef TEST_SMOKE
FUZZERS := $(filter $(patsubst fuzz/%,$(BUILD)/fuzz/%,$(shell grep '^fuzz/' tests/smoke)),$(FUZZERS))
endif

fuzz: $(FUZZERS)
	@for f in $(FUZZERS); do mkdir -p $(BUILD)/corpus/$$(basename $$f); \
		$$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=1 $(BUILD)/corpus/$$(basename $$f) tests/fuzz/seeds/$$(basename $$f) || exit 1; done

# The crash tests' build: the named fault points compiled in (src/util/fault.h).
# Only the files that include fault.h differ from the build without them:
# the others are that build's objects, copied (OBJ_FROM), not compiled again.
FAULTS := $(BUILD)-faults
FAULT_SRC := $(shell grep -l 'fault\.h"' $(SRC))
faults: $(filter-out $(FAULT_SRC:%.c=$(BUILD)/%.o),$(OBJ) $(KEEPER_OBJ))
	@$(MAKE) --no-print-directory BUILD=$(FAULTS) OBJ_FROM=$(BUILD) CFLAGS="$(CFLAGS) -DWRX_FAULTS" \
		$(FAULTS)/workrex $(FAULTS)/workrex-keeper $(FAULTS)/workrex-guest
ifdef OBJ_FROM
SHARED_OBJ := $(filter-out $(FAULT_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/%,$(sort $(OBJ) $(KEEPER_OBJ)))
$(SHARED_OBJ): $(BUILD)/%.o: $(OBJ_FROM)/%.o
	@mkdir -p $(dir $@)
	@cp $< $@
endif

# Kill -9 at each fault point, then the next command: nothing lost (tests/crash).
# (make test and make asan build the fault-point build first, on every core.)
crash-test: faults
	@WORKREX=$(abspath $(FAULTS)/workrex) WORKREX_GUEST=$(abspath $(FAULTS)/workrex-guest) \
		CRASH_QUICK=$(CRASH_QUICK) tests/crash/run.sh

fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$${FUZZ_SECONDS:-15}

$(BUILD)/lg2_worktree_add: bench/lg2_worktree_add.c
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIBS)

$(BUILD)/bench_reflow: bench/reflow.c $(BUILD)/libworkrex.a
	$(CC) $(ALL_CFLAGS) -Isrc -o $@ $< $(BUILD)/libworkrex.a $(LDFLAGS) $(LIBS)

bench: $(BIN) $(GUEST) $(KEEPER) $(BUILD)/lg2_worktree_add $(BUILD)/bench_reflow
	@WORKREX=$(abspath $(BIN)) WORKREX_GUEST=$(abspath $(GUEST)) LG2_ADD=$(abspath $(BUILD)/lg2_worktree_add) \
		REFLOW=$(abspath $(BUILD)/bench_reflow) python3 bench/bench.py

# The house style (docs/STYLE.md): make format applies .clang-format, format-check
# fails on any file it would change. check-layers: docs/ARCHITECTURE.md's layers,
# includes and calls (scripts/check-layers.sh), then planted violations it must
# refuse (tests/layers/run.sh).
FORMAT_FILES = $(shell find src tests bench -name '*.[ch]' | sort)
format:
	clang-format -i $(FORMAT_FILES)

# And the tests' waits: `until_ok N test -z "$(cmd)"` runs cmd once, as the
# shell expands it before until_ok is called; eval '...' makes it look again.
format-check:
	@clang-format --dry-run --Werror $(FORMAT_FILES) && \
		echo "format-check: $(words $(FORMAT_FILES)) files as .clang-format says"
	@if grep -rnE 'until_ok [0-9.]+ +[^e ][^#]*"\$$\(' tests; then \
		echo "format-check: a wait above reads its \$$(...) once: give it to eval '...'"; exit 1; fi
	@if [ -e .git ] && git ls-files | LC_ALL=C grep -v '^[A-Za-z0-9._/-]*$$'; then \
		echo "format-check: a tracked file named outside [A-Za-z0-9._/-] (above)"; exit 1; fi

check-layers: $(OBJ)
	@scripts/check-layers.sh src $(BUILD)/src
	@scripts/check-shape.sh src
	@tests/layers/run.sh $(BUILD)/src

# make install [PREFIX=/usr/local] [DESTDIR=]: the binary, the sandbox client
# beside it (where workrex looks for it), the man pages, and the completion
# scripts where bash-completion, zsh and fish look for them.
PREFIX  ?= /usr/local
SHARE    = $(DESTDIR)$(PREFIX)/share
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(SHARE)/man/man1 $(SHARE)/man/man5 \
		$(SHARE)/bash-completion/completions $(SHARE)/zsh/site-functions \
		$(SHARE)/fish/vendor_completions.d
	install -m 755 $(BIN) $(GUEST) $(KEEPER) $(SERVER) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 man/workrex.1 $(SHARE)/man/man1/
	install -m 644 man/workrex.yaml.5 $(SHARE)/man/man5/
	$(abspath $(BIN)) completions bash >$(SHARE)/bash-completion/completions/workrex
	$(abspath $(BIN)) completions zsh >$(SHARE)/zsh/site-functions/_workrex
	$(abspath $(BIN)) completions fish >$(SHARE)/fish/vendor_completions.d/workrex.fish

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/workrex $(DESTDIR)$(PREFIX)/bin/workrex-guest \
		$(DESTDIR)$(PREFIX)/bin/workrex-keeper $(DESTDIR)$(PREFIX)/bin/workrex-server \
		$(SHARE)/man/man1/workrex.1 $(SHARE)/man/man5/workrex.yaml.5 \
		$(SHARE)/bash-completion/completions/workrex $(SHARE)/zsh/site-functions/_workrex \
		$(SHARE)/fish/vendor_completions.d/workrex.fish

clean:
	rm -rf build build-asan build-faults build-asan-faults

-include $(OBJ:.o=.d) $(BUILD)/src/keeper/bin.d $(filter $(BUILD)/server/%,$(SERVER_OBJ:.o=.d))
