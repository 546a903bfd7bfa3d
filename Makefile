SHELL := /bin/bash
# chatpeg — two commands for a newcomer on a fresh Debian machine:
#   make run    installs missing Debian packages, builds (Release), parses the bundled example
#               output (examples/) into an OpenAI message and streams it as deltas
#   make test   installs missing Debian packages, builds, runs every test (ctest)
# Also: make bench (benchmarks), make format, make clean.

BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
DEBIAN_PACKAGES := g++ cmake make pkg-config python3 python3-jinja2 \
  nlohmann-json3-dev libcli11-dev libcpp-httplib-dev libgtest-dev libgmock-dev libbenchmark-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps configure build run test bench format clean

all: build

deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

EXAMPLE := --template examples/chatml_tools.jinja --request examples/weather_request.json

run: build
	@echo '$$ chatpeg parse $(EXAMPLE) < examples/weather_output.txt'
	@$(BUILD_DIR)/src/cli/chatpeg parse $(EXAMPLE) < examples/weather_output.txt
	@echo
	@echo '$$ chatpeg parse $(EXAMPLE) --stream --chunk 16 < examples/weather_output.txt'
	@$(BUILD_DIR)/src/cli/chatpeg parse $(EXAMPLE) --stream --chunk 16 < examples/weather_output.txt

test: build
	@cd $(BUILD_DIR) && ctest -j $(JOBS) --output-on-failure 2>&1 | grep -v -E '^ *([0-9]+/[0-9]+ Test +#[0-9]+: .* Passed|Start +[0-9]+: )' ; exit $${PIPESTATUS[0]}

bench: build
	@for b in $(BUILD_DIR)/bench/*_bench; do echo "== $$b"; $$b --benchmark_counters_tabular=true || exit 1; done

format:
	@find include src tests bench fuzz -name '*.h' -o -name '*.cpp' | xargs clang-format -i

clean:
	@rm -rf $(BUILD_DIR)
