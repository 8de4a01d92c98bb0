# SchedMate: one GNU Makefile for the library, the schedmate command, the
# build-time tools, the tests, the fuzz targets and the benchmarks.
#
#   make            build/schedmate, build/schedmate-slurm (the Slurm agent),
#                   build/libschedmate.so (not installed) and the plugin
#   make test       deps, AddressSanitizer+UBSan build, all tests, fuzz smoke
#   make demo       deps, build, run the main job on the embedded defaults
#   make bench      the benchmarks under bench/ (not part of the tests)
#   make asan       sanitizer build in build/asan
#   make lint       clang-format check
#
# Every C file under src/*/ goes into the library, every file under cli/
# into the command, every file under agent/ (with cli/'s helpers) into the
# Slurm agent's executable, every tests/unit/test_*.c into the unit-test
# runner.  The library is compiled with -fvisibility=hidden: only what the
# public headers mark SM_EXTERN is exported from build/libschedmate.so.
# Line-classifier corpora data/classifier/NAME.tsv are turned into
# prototype tables (build/gen/protos_NAME.c) by build/tools/sm_train, and
# every data/embed/NAME.EXT (signature tables, alias tables) becomes
# `const char sm__embed_NAME[]` (build/gen/embed_NAME.c) via sm_embed, so
# that the binary carries its knowledge files.

BUILD   ?= build
SAN     ?= 0
CC      ?= cc
PKGS    := sqlite3 hiredis yaml-0.1 libcjson tree-sitter zlib
# Built against, loaded on first use (see `soname` below): never linked.
PKGS_DL := libmicrohttpd libcurl
WARN    := -Wall -Wextra -Wstrict-prototypes -Wwrite-strings \
           -Wno-missing-field-initializers
CSTD    := -std=c11 -D_GNU_SOURCE
OPT     ?= -O2 -g
ifeq ($(SAN),1)
OPT     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
           -fno-sanitize-recover=undefined
endif
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) $(PKGS_DL) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS  += $(CSTD) $(WARN) $(OPT) $(EXTRA_CFLAGS) -Iinclude -Isrc \
           $(PKG_CFLAGS) -MMD -MP
LDFLAGS += $(OPT)
LDLIBS  += $(PKG_LIBS) -lm -lpthread

LIB_SRCS   := $(sort $(wildcard src/*/*.c))
CLI_SRCS   := $(sort $(wildcard cli/*.c))
AGENT_SRCS := $(sort $(wildcard agent/*.c))
TEST_SRCS  := $(sort $(wildcard tests/unit/*.c))
CORPORA    := $(sort $(wildcard data/classifier/*.tsv))
EMBEDS     := $(sort $(wildcard data/embed/*.*))
GEN_SRCS   := $(patsubst data/classifier/%.tsv,$(BUILD)/gen/protos_%.c,$(CORPORA)) \
              $(foreach f,$(EMBEDS),$(BUILD)/gen/embed_$(basename $(notdir $(f))).c)

LIB_OBJS   := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))

# The tree-sitter grammars (Python, bash, TOML: generated C from npm, never
# committed) are fetched once into build/third_party by
# scripts/fetch-grammar.sh and compiled into the library with warnings off
# for those files only.
GRAMMARS     := python bash toml
GRAMMAR_DIR  := build/third_party/tree-sitter-python
gdir          = build/third_party/tree-sitter-$(1)
GRAMMAR_SRCS := $(foreach g,$(GRAMMARS),$(call gdir,$(g))/src/parser.c $(call gdir,$(g))/src/scanner.c)
GRAMMAR_OBJS := $(foreach g,$(GRAMMARS),$(BUILD)/obj/grammar/$(g)/parser.o $(BUILD)/obj/grammar/$(g)/scanner.o)
GRAMMAR_CFLAGS := -std=c11 -w $(OPT) -fPIC -fvisibility=hidden \
                  -DTREE_SITTER_HIDE_SYMBOLS
GEN_OBJS   := $(patsubst %.c,%.o,$(GEN_SRCS))
CLI_OBJS   := $(patsubst %.c,$(BUILD)/obj/%.o,$(CLI_SRCS))
AGENT_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(AGENT_SRCS))
# What the agent takes from cli/: messages and the option table.
AGENT_CLI_OBJS := $(BUILD)/obj/cli/common.o $(BUILD)/obj/cli/options.o \
                  $(BUILD)/obj/cli/llmcli.o
TEST_OBJS  := $(patsubst %.c,$(BUILD)/obj/%.o,$(TEST_SRCS))

CORE_LIB   := $(BUILD)/libschedmate_core.a
LIB        := $(BUILD)/libschedmate.a
SHLIB      := $(BUILD)/libschedmate.so
BIN        := $(BUILD)/schedmate
AGENT      := $(BUILD)/schedmate-slurm
TRAIN      := $(BUILD)/tools/sm_train
EMBED      := $(BUILD)/tools/sm_embed
TEST_BIN   := $(BUILD)/sm_test

# The Slurm job_submit plugin is built where Slurm's headers are installed.
# It runs inside slurmctld, so it is never built with the sanitizers.
SLURM_H    := $(wildcard /usr/include/slurm/slurm.h)
PLUGIN     := $(if $(SLURM_H),$(BUILD)/plugins/job_submit_schedmate.so)
# The agent (`schedmate slurm`, which runs build/schedmate-slurm) talks to
# slurmctld through libslurm; without Slurm's headers its backend is built
# as a stub that says so.  libslurm is GPL-2.0-or-later: only the agent's
# executable links it, never the library or build/schedmate, and the
# agent links nothing it does not use (--as-needed), so that a library
# added for another command (such as an EPL-2.0 solver) cannot end up in
# it (README, Licence; tests/integration/build_linkage.sh checks both).
AGENT_LDLIBS := -Wl,--as-needed $(LDLIBS)
ifneq ($(SLURM_H),)
$(BUILD)/obj/agent/libslurm.o: CFLAGS += -DSM_HAVE_SLURM=1
AGENT_LDLIBS += -lslurm
endif
# Optional heavy libraries are not linked but loaded on first use with
# dlopen (src/util/dlib.c), so that the commands that do not need them
# never map them: their headers are needed to build, and the soname to
# open is read off the development link (lib$(1).so) the linker would
# have used, else the Debian bookworm one ($(2)).
soname = $(or $(shell f=$$($(CC) -print-file-name=lib$(1).so); \
  [ "$$f" != lib$(1).so ] && readelf -d "$$f" 2>/dev/null | \
  sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p'),$(2))
# COIN-OR CBC (coinor-libcbc-dev), the MILP solver of the Sia policy, is
# optional: without it `--policy sia` says why it cannot run and only the
# greedy fallback (--param sia.solver=greedy) is built.  HAVE_CBC=0 forces
# it off (then `make clean`: objects do not track the flag).  It is
# loaded by src/sim/cbc_load.c when `--policy sia` reads its parameters.
HAVE_CBC ?= $(shell pkg-config --exists cbc 2>/dev/null && echo 1 || \
              { test -f /usr/include/coin/Cbc_C_Interface.h && echo hdr; })
ifeq ($(HAVE_CBC),1)
CFLAGS  += -DSM_HAVE_CBC=1 $(shell pkg-config --cflags cbc)
else ifeq ($(HAVE_CBC),hdr)
CFLAGS  += -DSM_HAVE_CBC=1 -I/usr/include/coin
endif
# libcurl (libcurl4-openssl-dev), the LLM client's HTTP library, is
# loaded by src/llm/curl_load.c when a command is given an LLM URL.
CURL_SONAME := $(call soname,curl,libcurl.so.4)
$(BUILD)/obj/src/llm/curl_load.o: CFLAGS += -DSM_CURL_SONAME='"$(CURL_SONAME)"'
# libmicrohttpd, the HTTP server, by src/serve/mhd_load.c when
# `schedmate serve` starts its listeners.
MHD_SONAME := $(call soname,microhttpd,libmicrohttpd.so.12)
$(BUILD)/obj/src/serve/mhd_load.o: CFLAGS += -DSM_MHD_SONAME='"$(MHD_SONAME)"'
ifneq ($(filter 1 hdr,$(HAVE_CBC)),)
CBC_SONAME := $(call soname,CbcSolver,libCbcSolver.so.3)
$(BUILD)/obj/src/sim/cbc_load.o: CFLAGS += -DSM_CBC_SONAME='"$(CBC_SONAME)"'
endif

.PHONY: all lib cli tools unit test check asan demo bench fuzz lint structure clean deps deps-test
.DEFAULT_GOAL := all

all: $(BIN) $(AGENT) $(SHLIB) $(PLUGIN)
lib: $(LIB)
cli: $(BIN)
tools: $(TRAIN)
unit: $(TEST_BIN)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# The library's objects can go into the shared library too, and export
# only the public API.
LIB_FLAGS := -fPIC -fvisibility=hidden
$(LIB_OBJS) $(GEN_OBJS): CFLAGS += $(LIB_FLAGS)

# Objects are rebuilt when the flags they are compiled with change: the
# stamp holds them and is rewritten only when they differ.
FLAGS_STAMP := $(BUILD)/obj/flags.stamp
FLAGS_NOW   := $(CC) $(CFLAGS) $(LIB_FLAGS) $(GRAMMAR_CFLAGS)
$(shell mkdir -p $(BUILD)/obj && \
  { [ "$$(cat $(FLAGS_STAMP) 2>/dev/null)" = "$(FLAGS_NOW)" ] || \
    echo "$(FLAGS_NOW)" > $(FLAGS_STAMP); })
$(LIB_OBJS) $(GEN_OBJS) $(GRAMMAR_OBJS) $(CLI_OBJS) $(AGENT_OBJS) \
  $(TEST_OBJS): $(FLAGS_STAMP)

define grammar_rule
$(call gdir,$(1))/src/parser.c $(call gdir,$(1))/src/scanner.c &: scripts/fetch-grammar.sh
	scripts/fetch-grammar.sh $(1) $(call gdir,$(1))
	@touch $(call gdir,$(1))/src/parser.c $(call gdir,$(1))/src/scanner.c

$(BUILD)/obj/grammar/$(1)/%.o: $(call gdir,$(1))/src/%.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(GRAMMAR_CFLAGS) -I$(call gdir,$(1))/src -c $$< -o $$@

build/fuzz/obj/$(1)/%.o: $(call gdir,$(1))/src/%.c
	@mkdir -p $$(dir $$@)
	clang -std=c11 -w -g -O1 -fsanitize=address,undefined \
	  -I$(call gdir,$(1))/src -c $$< -o $$@
endef
$(foreach g,$(GRAMMARS),$(eval $(call grammar_rule,$(g))))

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(CC) $(CFLAGS) -c $< -o $@

# The core archive holds everything but the generated tables, so that the
# trainer can link against the embedder without needing its own output.
$(CORE_LIB): $(LIB_OBJS) $(GRAMMAR_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIB): $(LIB_OBJS) $(GRAMMAR_OBJS) $(GEN_OBJS)
	rm -f $@ && ar rcs $@ $^

$(TRAIN): $(BUILD)/obj/tools/sm_train.o $(CORE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/gen/protos_%.c: data/classifier/%.tsv $(TRAIN)
	@mkdir -p $(dir $@)
	$(TRAIN) --name $* --out $@ $<

$(EMBED): tools/sm_embed.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -o $@ $<

# One rule per embedded file (its extension is free).
define embed_rule
$(BUILD)/gen/embed_$(basename $(notdir $(1))).c: $(1) $(EMBED)
	@mkdir -p $$(dir $$@)
	$(EMBED) --name $(basename $(notdir $(1))) --out $$@ $(1)
endef
$(foreach f,$(EMBEDS),$(eval $(call embed_rule,$(f))))

$(BIN): $(CLI_OBJS) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIB) $(LDLIBS)

$(AGENT): $(AGENT_OBJS) $(AGENT_CLI_OBJS) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(AGENT_OBJS) $(AGENT_CLI_OBJS) $(LIB) $(AGENT_LDLIBS)

# The shared library is built to check what it exports (no sm__ symbol:
# tests/integration/build_exports.sh); it is not installed, and the
# programs and tests link the static archive.  Outside the sanitizer
# build every symbol it needs must be resolved (-z defs).
$(SHLIB): $(LIB_OBJS) $(GRAMMAR_OBJS) $(GEN_OBJS)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libschedmate.so.0 \
	  $(if $(filter 1,$(SAN)),,-Wl,-z,defs) -o $@ $^ $(LDLIBS)

$(BUILD)/plugins/job_submit_schedmate.so: plugins/slurm/job_submit_schedmate.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) -O2 -g -fPIC -shared -o $@ $<

$(TEST_BIN): $(TEST_OBJS) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $(TEST_OBJS) $(LIB) $(LDLIBS)

# The tests' stand-in for NVML, loaded by the GPU sampler with dlopen (never
# sanitized: it is a plain shared library like the real one).
FAKE_NVML  := $(BUILD)/nvml/libnvidia-ml.so.1
$(FAKE_NVML): tests/nvml/fake_nvml.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) -O2 -g -fPIC -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ $<
$(TEST_BIN): | $(FAKE_NVML)

# ---- Entry points for people and CI -------------------------------------

deps:
	@scripts/deps.sh

deps-test:
	@scripts/deps.sh --test

# The README's test command: install what is missing, build with
# AddressSanitizer and UBSan, run every test, then a short fuzz run.
test: deps-test
	$(MAKE) asan
	$(MAKE) -j2 all
	tests/run.sh build/asan
	@if command -v clang >/dev/null; then $(MAKE) fuzz FUZZ_SECONDS=$${FUZZ_SECONDS:-10}; \
	 else echo "fuzz: clang not found, skipped"; fi

check: test

ASAN_GOALS := schedmate schedmate-slurm libschedmate.so sm_test \
              $(if $(SLURM_H),plugins/job_submit_schedmate.so)
asan:
	$(MAKE) -j2 BUILD=build/asan SAN=1 $(addprefix build/asan/,$(ASAN_GOALS))

demo: deps
	$(MAKE) all
	scripts/demo.sh

bench: all
	@for b in bench/*/run.sh; do echo "== $$b"; $$b || exit 1; done

# libFuzzer targets: tests/fuzz/fuzz_NAME.c, linked with the library
# sources compiled by clang with the fuzzer and sanitizers.
FUZZ_SRCS    := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS    := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRCS))
FUZZ_SECONDS ?= 10
FUZZ_CFLAGS  := $(CSTD) -g -O1 -fsanitize=fuzzer,address,undefined \
                -Iinclude -Isrc $(PKG_CFLAGS)

# The grammar is compiled once for all fuzz targets (without the fuzzer's
# coverage instrumentation, which would only slow it down).
FUZZ_GRAMMAR := $(foreach g,$(GRAMMARS),build/fuzz/obj/$(g)/parser.o build/fuzz/obj/$(g)/scanner.o)
.PRECIOUS: $(FUZZ_GRAMMAR)

# The library is compiled once for all fuzz targets, with coverage
# instrumentation but without the fuzzer's main.
FUZZ_OBJ_CFLAGS := $(CSTD) -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
                   -Iinclude -Isrc $(PKG_CFLAGS) -MMD -MP
FUZZ_LIB_OBJS   := $(patsubst %.c,build/fuzz/lib/%.o,$(LIB_SRCS) $(GEN_SRCS))
.PRECIOUS: $(FUZZ_LIB_OBJS)
build/fuzz/lib/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_OBJ_CFLAGS) -c $< -o $@

build/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB_OBJS) $(FUZZ_GRAMMAR)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_LIB_OBJS) $(FUZZ_GRAMMAR) $(LDLIBS)

fuzz: $(GEN_SRCS) $(GRAMMAR_SRCS)
	@$(MAKE) -j2 $(FUZZ_BINS)
	@for f in $(FUZZ_BINS); do \
	  n=$$(basename $$f); mkdir -p build/fuzz/corpus-$$n; \
	  seeds=tests/fuzz/seeds/$${n#fuzz_}; [ -d $$seeds ] || seeds=; \
	  echo "fuzz: $$n for $(FUZZ_SECONDS) s"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=2048 \
	      -print_final_stats=0 build/fuzz/corpus-$$n $$seeds \
	      >build/fuzz/$$n.log 2>&1 || { tail -40 build/fuzz/$$n.log; exit 1; }; \
	  grep -E 'Done [0-9]+ runs' build/fuzz/$$n.log | tail -1; \
	done

lint:
	@clang-format --dry-run -Werror $(LIB_SRCS) $(CLI_SRCS) $(AGENT_SRCS) \
	  $(wildcard include/schedmate/*.h src/*/*.h cli/options.h agent/*.h)

# What the structure checkers say (tests/integration/structure_*.sh run
# them too): include and call cycles inside each folder, long functions.
structure: $(LIB_OBJS) $(CLI_OBJS) $(AGENT_OBJS)
	@scripts/check-cycles.py --obj $(BUILD)/obj
	@scripts/long-functions.py

clean:
	rm -rf build

-include $(wildcard build/fuzz/lib/src/*/*.d)
-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(AGENT_OBJS:.o=.d) $(TEST_OBJS:.o=.d) \
         $(BUILD)/obj/tools/sm_train.d $(GEN_OBJS:.o=.d)
