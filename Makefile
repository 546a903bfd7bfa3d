SHELL := /bin/bash
# chatpeg — two commands for a newcomer on a fresh Debian machine:
#   make run    installs missing Debian packages, builds the chatpeg command only (Release),
#               parses the bundled example output (examples/) into an OpenAI message and
#               streams it as deltas
#   make test   installs missing Debian packages, builds everything (libchatpeg shared), runs
#               every test (ctest), installing into a temporary prefix for the examples
# Also: make install [PREFIX=/usr/local] (headers, libchatpeg, the CLI, CMake package,
#   chatpeg.pc, the Python package),
#   make bench (benchmarks), make format, make clean,
#   make test-sanitize  every test under ASan + UBSan + LeakSanitizer (build-asan)
#   make test-tsan      the threaded modules' tests (base, http, server) under ThreadSanitizer
#                       (build-tsan); not part of .ci/run
#   make fuzz           libFuzzer targets (fuzz/README.md), each run FUZZ_SECONDS (default 60)

BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
PREFIX ?= /usr/local
DEBIAN_PACKAGES := g++ cmake make pkg-config python3 python3-jinja2 \
  nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libgtest-dev libgmock-dev libbenchmark-dev \
  libpcre2-dev pybind11-dev python3-dev python3-pytest libasio-dev
# Only for `make fuzz` (libFuzzer ships with clang's runtime libraries).
FUZZ_DEBIAN_PACKAGES := clang libclang-rt-14-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps fuzz-deps configure build build-cli run install test test-sanitize test-tsan fuzz bench format clean

all: build

deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

fuzz-deps:
	@missing=""; for p in $(FUZZ_DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "fuzz-deps: installing$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

build-cli: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target chatpeg

install: build
	@cmake --install $(BUILD_DIR) --prefix $(PREFIX)

EXAMPLE := --template examples/chatml_tools.jinja --request examples/weather_request.json

run: build-cli
	@echo '$$ chatpeg parse $(EXAMPLE) < examples/weather_output.txt'
	@$(BUILD_DIR)/src/cli/chatpeg parse $(EXAMPLE) < examples/weather_output.txt
	@echo
	@echo '$$ chatpeg parse $(EXAMPLE) --stream --chunk 16 < examples/weather_output.txt'
	@$(BUILD_DIR)/src/cli/chatpeg parse $(EXAMPLE) --stream --chunk 16 < examples/weather_output.txt

test: build
	@cd $(BUILD_DIR) && ctest -j $(JOBS) --output-on-failure 2>&1 | grep -v -E '^ *([0-9]+/[0-9]+ Test +#[0-9]+: .* Passed|Start +[0-9]+: )' ; exit $${PIPESTATUS[0]}

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer, part of
# ASan), -O1, frame pointers kept, every finding fatal. Its own build directory.
ASAN_DIR ?= build-asan
SANITIZE_ENV := ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1:strict_string_checks=1 \
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

test-sanitize: deps
	@cmake -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
	  -DCHATPEG_SANITIZE=address,undefined -DCHATPEG_BUILD_BENCH=OFF -DCHATPEG_PYTHON=OFF \
	  $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_DIR) -j $(JOBS)
	@cd $(ASAN_DIR) && $(SANITIZE_ENV) ctest -j $(JOBS) --output-on-failure 2>&1 | grep -v -E '^ *([0-9]+/[0-9]+ Test +#[0-9]+: .* Passed|Start +[0-9]+: )' ; exit $${PIPESTATUS[0]}

# The modules that run threads (the cancel source, the HTTP server's loop and workers, the
# gateway's streams and backend deadlines) under ThreadSanitizer; halts on the first report.
TSAN_DIR ?= build-tsan
TSAN_TESTS := chatpeg_base_tests chatpeg_http_tests chatpeg_server_tests
test-tsan: deps
	@cmake -S . -B $(TSAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
	  -DCHATPEG_SANITIZE=thread -DCHATPEG_BUILD_BENCH=OFF -DCHATPEG_PYTHON=OFF \
	  $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(TSAN_DIR) -j $(JOBS) --target $(TSAN_TESTS)
	@for t in $(TSAN_TESTS); do \
	  TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 $(TSAN_DIR)/tests/$$t --gtest_brief=1 \
	    || exit 1; \
	done

# libFuzzer targets (clang; -fsanitize=fuzzer,address,undefined), each run FUZZ_SECONDS with its
# seed corpus and dictionary; FUZZ_TARGETS picks some (default all). Fails on any crash, leak
# or timeout; the input is left in $(FUZZ_DIR)/fuzz/artifacts/.
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=

fuzz: deps fuzz-deps
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_DIR) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
	  -DCHATPEG_BUILD_FUZZ=ON -DCHATPEG_BUILD_TESTS=OFF -DCHATPEG_BUILD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(FUZZ_DIR) --target chatpeg_fuzz -j $(JOBS)
	@fuzz/run_fuzz.sh $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

bench: build
	@for b in $(BUILD_DIR)/bench/*_bench; do echo "== $$b"; $$b --benchmark_counters_tabular=true || exit 1; done

format:
	@find include src tests bench fuzz -name '*.h' -o -name '*.cpp' | xargs clang-format -i

clean:
	@rm -rf $(BUILD_DIR)
