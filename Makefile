# ndtwin: two commands do everything on a fresh Debian 12 machine: `make demo` and `make test`.
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
PKGS := cmake g++ make libyaml-cpp-dev nlohmann-json3-dev libfmt-dev libcli11-dev \
        libgtest-dev libgmock-dev libbenchmark-dev clang-format python3 \
        nodejs $(if $(shell command -v npm),,npm) chromium chromium-driver python3-selenium \
        libcpp-httplib-dev pkg-config
NDTWIN := $(BUILD)/ndtwin

.PHONY: deps build test unit asan demo bench format validate clean

deps:
	@missing=$$(for p in $(PKGS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
	@# The charting JavaScript that reports inline (pinned by web/package-lock.json).
	@[ -f web/node_modules/.package-lock.json ] && cmp -s web/package-lock.json web/node_modules/.ndt-lock || \
	  { (cd web && npm ci --no-audit --no-fund --loglevel=error) && cp web/package-lock.json web/node_modules/.ndt-lock; }

$(BUILD)/build.ninja $(BUILD)/Makefile:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j$(JOBS)

unit: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DNDT_SANITIZE=ON -DNDT_BENCH=OFF >/dev/null
	cmake --build $(ASAN_BUILD) -j$(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j$(JOBS)

test: unit asan

demo: build
	@bash scripts/demo.sh $(NDTWIN)

bench: build
	@for b in $(BUILD)/*_bench; do echo "== $$b"; $$b --benchmark_min_time=0.2; done

# Also regenerates data/calibration/intervals.yaml (the prediction intervals; commit it).
validate: build
	$(NDTWIN) validate --write-intervals

format:
	clang-format -i $$(git ls-files 'src/*.cc' 'src/*.h' 'bench/*.cc')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
