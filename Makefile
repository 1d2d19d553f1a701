# ndtwin: two commands do everything on a fresh Debian 12 machine: `make demo` and `make test`.
JOBS ?= $(shell nproc)
BUILD ?= build
ASAN_BUILD ?= build-asan
PKGS := cmake g++ make libyaml-cpp-dev nlohmann-json3-dev libfmt-dev libcli11-dev \
        libgtest-dev libgmock-dev libbenchmark-dev clang-format python3 \
        pybind11-dev python3-pybind11 python3-pandas python3-matplotlib python3-pytest \
        python3-nbconvert python3-ipykernel python3-setuptools python3-pip \
        libsqlite3-dev libopenmpi-dev openmpi-bin \
        nodejs $(if $(shell command -v npm),,npm) chromium chromium-driver python3-selenium \
        libcpp-httplib-dev pkg-config
NDTWIN := $(BUILD)/ndtwin
PREFIX ?= /usr/local

.PHONY: deps build test unit asan demo bench format validate install clean

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
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DNDT_UNITY=ON >/dev/null

build: deps $(BUILD)/Makefile
	cmake --build $(BUILD) -j$(JOBS)

unit: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

# ASAN_CXXFLAGS: extra compile flags for a fresh sanitizer tree, e.g. to time it at -O1:
# `make asan ASAN_BUILD=build-asan-o1 ASAN_CXXFLAGS=-O1` (BENCHMARKS.md, "CI time").
asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DNDT_SANITIZE=ON -DNDT_BENCH=OFF -DNDT_PYTHON=OFF -DNDT_UNITY=ON \
	  $(if $(ASAN_CXXFLAGS),-DCMAKE_CXX_FLAGS="$(ASAN_CXXFLAGS)") >/dev/null
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

# PREFIX/bin/ndtwin plus data/ and the validation measurements in PREFIX/share/ndtwin, where the
# installed binary finds them. Build first as yourself; PREFIX needs write access:
# `make build && sudo make install`, or `make install PREFIX=$$HOME/.local` (no root).
install:
	@test -x $(NDTWIN) || { echo "no $(NDTWIN): run 'make build' first"; exit 1; }
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/ndtwin
	install -m 755 $(NDTWIN) $(DESTDIR)$(PREFIX)/bin/ndtwin
	rm -rf $(DESTDIR)$(PREFIX)/share/ndtwin/data $(DESTDIR)$(PREFIX)/share/ndtwin/validation
	cp -R data validation $(DESTDIR)$(PREFIX)/share/ndtwin/

format:
	clang-format -i $$(git ls-files 'src/*.cc' 'src/*.h' 'bench/*.cc')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
