#!/usr/bin/env bash
# The main job of `make demo`: the catalog, a cluster, a collective sweep, a training step and an
# inference service, each printed as a user would see them.
set -euo pipefail
bin="${1:-build/ndtwin}"
mkdir -p out
step() { echo; echo "\$ ndtwin $*"; "$bin" "$@"; }
step sku list
step topo --sku Standard_ND96amsr_A100_v4 --vms 2
