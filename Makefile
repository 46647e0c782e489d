# workrex - see README.md. `make run` builds and opens the dashboard (installing
# missing build dependencies first); `make test` runs every test.

CC      ?= cc
PKGS    := ncursesw vterm libuv yaml-0.1 json-c libgit2
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
WARN    := -Wall -Wextra -Wshadow -Wno-unused-parameter
CFLAGS  ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -D_XOPEN_SOURCE_EXTENDED $(WARN) $(PKG_CFLAGS)
ifeq ($(CI),true)
ALL_CFLAGS += -Werror
endif
ALL_CFLAGS += $(CFLAGS)
LIBS    := $(PKG_LIBS) -lutil

BUILD   ?= build
# The sandbox client: libc and json-c only, linked statically (see src/guest/main.c);
# never with sanitizers, which cannot link statically.
GUEST_SRC := src/guest/main.c src/cmd/cmd_rpc.c src/rpc/proto.c src/util/util.c
GUEST   := $(BUILD)/workrex-guest


SRC     := $(shell find src -name '*.c' -not -path 'src/guest/*' | sort)
OBJ     := $(SRC:%.c=$(BUILD)/%.o)
LIBOBJ  := $(filter-out $(BUILD)/src/main.o,$(OBJ))
BIN     := $(BUILD)/workrex

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all deps test-deps run test fuzz-smoke unit e2e sandbox-test asan fuzz bench format clean guest

all: $(BIN) $(GUEST)

guest: $(GUEST)

$(GUEST): $(GUEST_SRC) $(wildcard src/cmd/cmd_rpc.h src/rpc/proto.h src/util/util.h)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) $(if $(filter true,$(CI)),-Werror) -O2 -g -static \
		-o $@ $(GUEST_SRC) $(shell pkg-config --static --libs json-c)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(BIN): $(OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $(OBJ) $(LDFLAGS) $(LIBS)

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

e2e: $(BIN) $(GUEST)
	@WORKREX=$(abspath $(BIN)) WORKREX_GUEST=$(abspath $(GUEST)) tests/e2e/run.sh

# Real podman (runc) with the tests' own image; see tests/sandbox/run.sh.
sandbox-test: $(BIN) $(GUEST)
	@WORKREX=$(abspath $(BIN)) WORKREX_GUEST=$(abspath $(GUEST)) tests/sandbox/run.sh

test: test-deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory e2e
	@$(MAKE) --no-print-directory sandbox-test
	@$(MAKE) --no-print-directory fuzz-smoke

# AddressSanitizer + UBSan build of everything, then the whole suite on it.
asan:
	@$(MAKE) --no-print-directory BUILD=build-asan CC=clang \
		CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined" \
		LDFLAGS="-fsanitize=address,undefined" unit e2e sandbox-test

FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_SECONDS ?= 60
FUZZ_OBJ := $(patsubst %.c,$(BUILD)/fuzzobj/%.o,$(filter-out src/main.c,$(SRC)))
.SECONDARY: $(FUZZ_OBJ)
$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJ)
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -std=c11 -D_GNU_SOURCE $(PKG_CFLAGS) -Isrc -o $@ $^ $(LIBS)

$(BUILD)/fuzzobj/%.o: %.c
	@mkdir -p $(dir $@)
	clang -O1 -g -fsanitize=fuzzer-no-link,address,undefined -std=c11 -D_GNU_SOURCE -D_XOPEN_SOURCE_EXTENDED $(WARN) $(PKG_CFLAGS) -c -o $@ $<

FUZZERS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))

fuzz: $(FUZZERS)
	@for f in $(FUZZERS); do mkdir -p $(BUILD)/corpus/$$(basename $$f); \
		$$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $(BUILD)/corpus/$$(basename $$f) tests/fuzz/seeds/$$(basename $$f) || exit 1; done

fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$${FUZZ_SECONDS:-15}

$(BUILD)/lg2_worktree_add: bench/lg2_worktree_add.c
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIBS)

bench: $(BIN) $(GUEST) $(BUILD)/lg2_worktree_add
	@WORKREX=$(abspath $(BIN)) WORKREX_GUEST=$(abspath $(GUEST)) LG2_ADD=$(abspath $(BUILD)/lg2_worktree_add) python3 bench/bench.py

format:
	clang-format -i $(SRC) $(shell find src tests -name '*.h') $(UNIT_SRC) $(wildcard tests/fuzz/*.c)

clean:
	rm -rf build build-asan

-include $(OBJ:.o=.d)
