# jvmpishim — build, test, demo, install.
#
#   make                 build/libjvmpishim.so, the legacy agents, test programs
#   make check           unit tests (no JVM, also under ASan/UBSan) + integration tests on every JDK found,
#                        those in tests/it/modes.list also under -Xint and -Xcomp -XX:TieredStopAtLevel=1
#   make check-modes     every integration test on every JDK found under all three VM modes
#   make demo            a bundled legacy agent profiles a sample app through the shim
#   make bench           the benchmark harness (bench/run.sh); bench-record: what record= costs
#   make fuzz            the libFuzzer targets in fuzz/, FUZZ_SECONDS (600) each; fuzz-smoke: 20 s each
#   make install PREFIX=/usr/local [DESTDIR=...]   both architectures built, each in its multiarch
#                        directory: $(PREFIX)/lib/x86_64-linux-gnu, $(PREFIX)/lib/i386-linux-gnu,
#                        each with pkgconfig/jvmpishim.pc
#   make i386            the i386 build in build/i386/ (gcc -m32, against a 32-bit JDK's headers):
#                        libjvmpishim.so (ELF32), agents/*, jvmpitrace, jvmpidump, hprofcheck,
#                        tools/*.so, unit/* and unit-san/*. Stops with the apt-get line when no
#                        i386 JDK or no multilib compiler is found. `make` builds it too when both
#                        are present (I386=no turns that off); make check then runs the unit tests
#                        of both and the integration tests on the i386 JDKs with build/i386/.
#   make deb             Debian packages (debian/) into build/deb/, build/deb/i386/; lintian
#   make setup           what make demo, check and deb need from the system: all there?
#                        (demo, check and deb install what is missing first: tools/deps.sh)
#
# make also builds build/jvmpitrace, which reads what record=PATH writes (docs/recording.md).
#
# The JDK compiled against is the oldest supported one found (tools/find-jdk.sh build);
# set JDK=/path/to/jdk to override. Tests run on every JDK tools/find-jdk.sh all lists.

# Setup: make demo, check and deb first run tools/deps.sh, the one list of what they need from
# the system. It installs what is missing (as root, with apt-get) or stops here with the command
# to run, before anything is compiled. JVMPISHIM_SETUP=no skips it.
DEPS_GOALS := $(filter demo check deb setup,$(MAKECMDGOALS))
ifneq ($(DEPS_GOALS),)
ifneq ($(JVMPISHIM_SETUP),no)
ifneq ($(shell tools/deps.sh $(DEPS_GOALS) >&2 && echo ok),ok)
$(error setup: what make $(DEPS_GOALS) needs is not installed (above: what is missing and how to install it))
endif
endif
endif

# ARCH: the architecture this make builds for (x86_64, or i386 in the sub-make of make i386).
ARCH     ?= $(shell uname -m)
JDK      ?= $(shell tools/find-jdk.sh build $(ARCH))
ifeq ($(JDK),)
$(error no JDK >= 17 with include/jvmti.h and javac found; install openjdk-17-jdk-headless or set JDK=)
endif
CC       ?= cc
CXX      ?= c++
PREFIX   ?= /usr/local
DESTDIR  ?=
VERSION  := 0.1.0

B        := build
JNI_INC  := -I$(JDK)/include -I$(JDK)/include/linux
WARN     := -Wall -Wextra -Werror
CFLAGS   ?= -O2 -g
# Initial-exec TLS: the shim's thread-locals (read several times on every event and JVMPI
# call) are one %fs-relative load each, with no call: the general-dynamic model calls
# __tls_get_addr every time (6 % of a method-event run on JDK 25) and TLS descriptors still
# call _dl_tlsdesc_return (measured, bench/calls.sh micro, JDK 17: RawMonitorEnter+Exit 23.7
# -> 18.4 ns, GetMethodClass 9.2 -> 5.7 ns). The library is then marked STATIC_TLS: glibc
# places its 0.4 KB in the static TLS surplus it keeps for dlopen'ed libraries, and dlopen
# fails ("cannot allocate memory in static TLS block") only where that surplus was shrunk
# or used up (docs/options.md, *Loading the shim*). x86-64 only.
TLS_DIALECT  := $(if $(filter x86_64,$(ARCH)),-ftls-model=initial-exec,)
# GNU_SRC: on i386, large-file interfaces too: stat, fstat and readdir of the 32-bit ABI fail
# with EOVERFLOW on a file system with 64-bit inode numbers (the agent library's stat in
# face/loader.c, its ELF reader's fstat, a tool's readdir).
GNU_SRC      := -D_GNU_SOURCE $(if $(filter i386 i686 x86,$(ARCH)),-D_FILE_OFFSET_BITS=64)
SHIM_CFLAGS  := -std=c11 $(WARN) $(CFLAGS) $(TLS_DIALECT) -fPIC -fvisibility=hidden $(GNU_SRC) -pthread -Iinclude -Ishim -I$(B)/gen $(JNI_INC)
# The migration report's per-row text is docs/mapping.md's, generated into a header.
FIDELITY_ROWS := $(B)/gen/core/fidelity_rows.h
# Legacy agents see include/jvmpi.h and the JDK's jni.h only, as a JDK 1.3 agent did.
AGENT_CFLAGS := $(WARN) $(CFLAGS) -fPIC -Iinclude $(JNI_INC)

# shim/: the entry point at the top, then one folder per layer (shim/README.md).
SHIM_SRC := $(sort $(wildcard shim/*.c shim/*/*.c))
SHIM_HDR := $(wildcard shim/*/*.h) include/jvmpi.h
SHIM_OBJ := $(SHIM_SRC:shim/%.c=$(B)/obj/%.o)

AGENT_C   := $(wildcard legacy-agents/*.c)
AGENT_CXX := $(wildcard legacy-agents/*.cc)
KIT_HDR   := $(wildcard legacy-agents/kit/*.h)
AGENTS    := $(AGENT_C:legacy-agents/%.c=$(B)/agents/lib%.so) $(AGENT_CXX:legacy-agents/%.cc=$(B)/agents/lib%.so)
# The bundled hprof: several files in its own directory, one library.
HPROF_SRC := $(sort $(wildcard legacy-agents/hprof/*.c))
HPROF_HDR := $(wildcard legacy-agents/hprof/*.h)
AGENTS    += $(B)/agents/libhprof.so

UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT      := $(UNIT_SRC:tests/unit/%.c=$(B)/unit/%)
UNIT_SAN  := $(UNIT_SRC:tests/unit/%.c=$(B)/unit-san/%)
# jvmpitrace: the reader of record= files and its commands (tools/jvmpitrace/), with the
# shim's format and dump decoder. TRACE_LIB is all of it but main().
TRACE_SRC := $(sort $(wildcard tools/jvmpitrace/*.c))
TRACE_HDR := tools/jvmpitrace/trace.h shim/core/recfmt.h shim/core/dumpcheck.h include/jvmpi.h
TRACE_LIB := $(filter-out tools/jvmpitrace/main.c,$(TRACE_SRC)) shim/core/recfmt.c shim/core/dumpcheck.c
# Pure-C modules the unit tests link (no JVM needed).
UNIT_LINK := shim/core/options.c shim/core/log.c shim/core/idspace.c shim/core/dumpbuf.c shim/core/fidelity.c shim/core/elfsym.c \
             shim/core/tables.c \
             $(sort $(wildcard shim/classfile/*.c)) $(TRACE_LIB)

JAVA_SRC  := $(wildcard tests/java/*.java)
CLASSES   := $(B)/classes/.stamp

# libFuzzer targets (fuzz/): clang with its runtime (Debian: clang libclang-rt-14-dev).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 600
FUZZ_BIN     := $(B)/fuzz/fuzz_options $(B)/fuzz/fuzz_dumpcheck $(B)/fuzz/fuzz_record
FUZZ_CFLAGS  := -std=c11 $(WARN) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
                -fno-omit-frame-pointer $(GNU_SRC) -Iinclude -Ishim $(JNI_INC)
# "yes" if FUZZ_CC links a libFuzzer target; deferred, so only fuzz and check recipes pay for it.
have_fuzzer   = $(shell printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' | \
                  $(FUZZ_CC) -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null && echo yes)

.PHONY: deb setup
.PHONY: install-lib all check check-modes unit unit-san it demo install clean bench bench-record fuzz fuzz-smoke fuzz-cc i386 i386-all

# ---- i386 ----
# The i386 build is this Makefile again, for ARCH=i386 with gcc -m32 into build/i386/. It
# is part of make (and of check and install) on an x86-64 machine with an i386 JDK and a
# compiler that links -m32 programs; make i386 asks for it and says what is missing.
I386_APT := dpkg --add-architecture i386 && apt-get update && apt-get install gcc-multilib g++-multilib openjdk-17-jdk-headless:i386
I386_JDK  = $(shell tools/find-jdk.sh build x86)
have_m32  = $(shell printf 'int main(void) { return 0; }\n' | $(CC) -m32 -x c - -o /dev/null 2>/dev/null && echo yes)
I386     ?= $(if $(filter x86_64,$(ARCH)),$(if $(I386_JDK),$(if $(have_m32),yes)))
WITH_I386 := $(filter yes,$(I386))
# all is defined here, after WITH_I386: a rule's prerequisites are expanded when it is read.
all: $(B)/libjvmpishim.so $(AGENTS) $(CLASSES) $(B)/jvmpidump $(B)/jvmpitrace $(B)/hprofcheck $(B)/tools/libbcitest.so $(B)/tools/libcmlgen.so $(if $(WITH_I386),i386)
B32      := $(B)/i386
i386:
	@[ "$(ARCH)" = x86_64 ] || { echo "make i386: builds on an x86-64 machine only (this is $(ARCH))" >&2; exit 1; }
	@[ -n "$(I386_JDK)" ] || { echo "make i386: no i386 JDK >= 17 found; install it: $(I386_APT)" >&2; exit 1; }
	@[ "$(have_m32)" = yes ] || { echo "make i386: $(CC) -m32 cannot link; install the multilib compilers: $(I386_APT)" >&2; exit 1; }
	@$(MAKE) --no-print-directory ARCH=i386 I386=no B=$(B32) JDK=$(I386_JDK) CC="$(CC) -m32" CXX="$(CXX) -m32" i386-all
i386-all: $(B)/libjvmpishim.so $(AGENTS) $(B)/jvmpidump $(B)/jvmpitrace $(B)/hprofcheck $(B)/tools/libbcitest.so \
          $(B)/tools/libcmlgen.so $(UNIT) $(UNIT_SAN)

$(B)/obj/%.o: shim/%.c $(SHIM_HDR) | $(B)/obj
	@mkdir -p $(@D)
	$(CC) $(SHIM_CFLAGS) -c $< -o $@

$(FIDELITY_ROWS): docs/mapping.md tools/fidelity-rows.awk
	@mkdir -p $(@D)
	awk -f tools/fidelity-rows.awk docs/mapping.md > $@.tmp && mv $@.tmp $@
$(B)/obj/core/fidelity.o: $(FIDELITY_ROWS)

$(B)/libjvmpishim.so: $(SHIM_OBJ)
	$(CC) -shared -pthread $(LDFLAGS) -o $@ $^ -ldl -Wl,-z,defs -Wl,--version-script=shim/exports.map

$(B)/agents/lib%.so: legacy-agents/%.c include/jvmpi.h $(KIT_HDR) | $(B)/agents
	$(CC) -std=gnu99 $(AGENT_CFLAGS) -shared -o $@ $< -lpthread
# The agents written for 32 bits cast ids to int and back, as their i386 sources did; gcc
# warns of the size change on x86-64, where building them is how the tests see what it does.
$(B)/agents/libheap32.so $(B)/agents/libprof32.so: AGENT_CFLAGS += -Wno-pointer-to-int-cast -Wno-int-to-pointer-cast
$(B)/agents/lib%.so: legacy-agents/%.cc include/jvmpi.h $(KIT_HDR) | $(B)/agents
	$(CXX) -std=c++11 $(AGENT_CFLAGS) -shared -o $@ $<
$(B)/agents/libhprof.so: $(HPROF_SRC) $(HPROF_HDR) include/jvmpi.h | $(B)/agents
	$(CC) -std=gnu99 $(AGENT_CFLAGS) -shared -o $@ $(HPROF_SRC) -lpthread

# A unit test that #includes a shim source (to reach its static functions) is rebuilt when
# that source changes.
UNIT_INCLUDED := $(addprefix shim/,$(shell sed -n 's/^\#include "\([a-z_]*\/[a-z_]*\.c\)"/\1/p' $(UNIT_SRC)))
$(B)/unit/%: tests/unit/%.c $(UNIT_LINK) $(UNIT_INCLUDED) $(SHIM_HDR) $(TRACE_HDR) $(FIDELITY_ROWS) | $(B)/unit
	$(CC) -std=c11 $(WARN) -O1 -g $(GNU_SRC) -pthread -Iinclude -Ishim -I$(B)/gen -Itools/jvmpitrace $(JNI_INC) -o $@ $< $(UNIT_LINK) -ldl
$(B)/unit-san/%: tests/unit/%.c $(UNIT_LINK) $(UNIT_INCLUDED) $(SHIM_HDR) $(TRACE_HDR) $(FIDELITY_ROWS) | $(B)/unit-san
	$(CC) -std=c11 $(WARN) -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
	  $(GNU_SRC) -pthread -Iinclude -Ishim -I$(B)/gen -Itools/jvmpitrace $(JNI_INC) -o $@ $< $(UNIT_LINK) -ldl

$(CLASSES): $(JAVA_SRC) | $(B)/classes
	$(JDK)/bin/javac -nowarn -d $(B)/classes $(JAVA_SRC)
	@touch $@

$(B)/fuzz/fuzz_options: fuzz/fuzz_options.c shim/core/options.c shim/core/options.h shim/core/log.h | $(B)/fuzz fuzz-cc
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ fuzz/fuzz_options.c shim/core/options.c
$(B)/fuzz/fuzz_dumpcheck: fuzz/fuzz_dumpcheck.c shim/core/dumpcheck.c shim/core/dumpcheck.h include/jvmpi.h | $(B)/fuzz fuzz-cc
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ fuzz/fuzz_dumpcheck.c shim/core/dumpcheck.c
$(B)/fuzz/fuzz_record: fuzz/fuzz_record.c $(TRACE_LIB) $(TRACE_HDR) | $(B)/fuzz fuzz-cc
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Itools/jvmpitrace -o $@ fuzz/fuzz_record.c $(TRACE_LIB)
fuzz-cc:
	@[ "$(have_fuzzer)" = yes ] || { echo "$(FUZZ_CC) cannot build libFuzzer targets: install clang libclang-rt-14-dev or set FUZZ_CC=" >&2; exit 1; }

$(B)/obj $(B)/agents $(B)/unit $(B)/unit-san $(B)/classes $(B)/fuzz:
	@mkdir -p $@

unit: $(UNIT)
	@tests/run-unit.sh $(UNIT)
unit-san: $(UNIT_SAN)
	@tests/run-unit.sh $(UNIT_SAN)

it: all
	@tests/run.sh

# check: everything, one summary line at the end. The fuzz smoke run is skipped, loudly,
# where clang cannot build libFuzzer targets.
UNIT32 = $(if $(WITH_I386),$(UNIT:$(B)/%=$(B32)/%) $(UNIT_SAN:$(B)/%=$(B32)/%))
check: all $(UNIT) $(UNIT_SAN)
	@if [ "$(have_fuzzer)" = yes ]; then $(MAKE) --no-print-directory $(FUZZ_BIN) || exit 1; f="$(FUZZ_BIN)"; else f=SKIP; fi; \
	  tests/run.sh --unit "$(UNIT) $(UNIT_SAN) $(UNIT32) tests/check-tls.sh tests/check-layers.sh tests/check-doc-refs.sh tests/check-deps.sh tests/check-model.sh" --fuzz "$$f" --modes "int c1" --modes-list tests/it/modes.list --qemu-list tests/it/qemu.list

# check-modes: the whole matrix, every integration test x JDK x VM mode (default, int, c1).
check-modes: all
	@tests/run.sh --modes "int c1"

# fuzz: each libFuzzer target for FUZZ_SECONDS (default 600) under nice; a crash is saved
# in build/fuzz/ and fails the run. fuzz-smoke: ~20 s each over the seed corpus.
fuzz: $(FUZZ_BIN)
	@fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BIN)
fuzz-smoke: $(FUZZ_BIN)
	@fuzz/run.sh --smoke 20 $(FUZZ_BIN)

demo: all
	@tests/demo.sh

bench: all
	@bench/run.sh

# What record= costs: the same method-event run with and without it, side by side.
bench-record: all
	@bench/record.sh

# Each architecture's shim in its multiarch directory, with its pkg-config file (libdir
# there); jvmpitrace (the host's, it reads recordings of both) and the header once.
MULTIARCH     = $(if $(filter i386 i686 x86,$(ARCH)),i386-linux-gnu,$(ARCH)-linux-gnu)
install: $(B)/libjvmpishim.so $(B)/jvmpitrace $(if $(WITH_I386),i386)
	$(MAKE) --no-print-directory install-lib B=$(B) ARCH=$(ARCH)
	$(if $(WITH_I386),$(MAKE) --no-print-directory install-lib B=$(B32) ARCH=i386 I386=no JDK=$(I386_JDK))
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/doc/jvmpishim $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(B)/jvmpitrace $(DESTDIR)$(PREFIX)/bin/jvmpitrace
	install -m 0644 include/jvmpi.h $(DESTDIR)$(PREFIX)/include/jvmpi.h
	install -m 0644 README.md docs/*.md $(DESTDIR)$(PREFIX)/share/doc/jvmpishim/
install-lib:
	install -d $(DESTDIR)$(PREFIX)/lib/$(MULTIARCH)/pkgconfig
	install -m 0755 $(B)/libjvmpishim.so $(DESTDIR)$(PREFIX)/lib/$(MULTIARCH)/libjvmpishim.so
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' -e 's|@LIBDIR@|$(PREFIX)/lib/$(MULTIARCH)|g' \
	  jvmpishim.pc.in > $(DESTDIR)$(PREFIX)/lib/$(MULTIARCH)/pkgconfig/jvmpishim.pc

clean:
	rm -rf $(B)

# Binary HPROF checker for the hprof tests (pure C, no JVM).
$(B)/hprofcheck: tests/tools/hprofcheck.c
	$(CC) -std=c11 $(WARN) -O1 -g $(GNU_SRC) -o $@ $<

# Native JVMTI test agent for the class-file rewriter (tests/it/methods/bci_rewrite.sh).
$(B)/tools/libbcitest.so: tests/tools/bcitest.c $(wildcard shim/classfile/*.c shim/classfile/*.h)
	@mkdir -p $(B)/tools
	$(CC) -std=c11 $(WARN) $(CFLAGS) -fPIC -shared $(GNU_SRC) -pthread -Ishim $(JNI_INC) -o $@ tests/tools/bcitest.c $(sort $(wildcard shim/classfile/*.c))

# Dump decoder for tests and people (shares the shim's decoder).
$(B)/tools/libcmlgen.so: tests/tools/cmlgen.c
	@mkdir -p $(B)/tools
	$(CC) -std=c11 $(WARN) $(CFLAGS) -fPIC -shared $(GNU_SRC) -pthread $(JNI_INC) -o $@ tests/tools/cmlgen.c

# Reader of record= files, for people and tests (tools/jvmpitrace/, docs/recording.md).
$(B)/jvmpitrace: $(TRACE_SRC) $(TRACE_LIB) $(TRACE_HDR)
	$(CC) -std=c11 $(WARN) -O2 -g $(TOOL_HARDEN) $(GNU_SRC) -Iinclude -Ishim -Itools/jvmpitrace $(JNI_INC) $(LDFLAGS) -o $@ $(TRACE_SRC) \
	  shim/core/recfmt.c shim/core/dumpcheck.c

$(B)/jvmpidump: tests/tools/jvmpidump.c shim/core/dumpcheck.c shim/core/dumpcheck.h include/jvmpi.h
	$(CC) -std=c11 $(WARN) -O1 -g $(TOOL_HARDEN) $(GNU_SRC) -Iinclude -Ishim $(JNI_INC) $(LDFLAGS) -o $@ tests/tools/jvmpidump.c shim/core/dumpcheck.c

# Debian packages (debian/, tools/deb.sh): into build/deb/ for this machine's architecture and,
# on amd64 where `make i386` exists, build/deb/i386/; then lintian. The stamp is what make check
# uses (tests/it/lifecycle/deb_install.sh installs the packages into a scratch root): they are
# built again only when what goes into them changed. TOOL_HARDEN: debian/rules passes Debian's
# hardening flags for jvmpitrace and jvmpidump, whose own -O levels stay.
DEB_STAMP := $(B)/deb/.stamp
DEB_INPUT := $(SHIM_SRC) $(SHIM_HDR) $(TRACE_SRC) $(TRACE_LIB) $(TRACE_HDR) tests/tools/jvmpidump.c jvmpishim.pc.in \
             Makefile README.md docs/mapping.md $(wildcard docs/*.md docs/man/* debian/* debian/*/*) tools/deb.sh
$(DEB_STAMP): $(DEB_INPUT)
	@tools/deb.sh
	@touch $@
check: $(DEB_STAMP)
deb: $(DEB_STAMP)
	@tools/deb.sh --lintian
setup:
	@tools/deps.sh --print setup
