#!/usr/bin/env bash
# The main job of `make demo`: the catalog, a cluster, a collective sweep, a training step, an
# inference service, two long runs with failures (fleet) and a small sweep with its Pareto
# frontier, each printed as a user would see them. Files (trace, sweep database) go to out/.
set -euo pipefail
bin="${1:-build/ndtwin}"
mkdir -p out
step() { echo; echo "\$ ndtwin $*"; "$bin" "$@"; }
step sku list
step topo --sku Standard_ND96amsr_A100_v4 --vms 2
step collective --sku Standard_ND96amsr_A100_v4 --vms 2 --op all_reduce --min-bytes 1M --max-bytes 1G --step-factor 8
step train --sku Standard_ND96amsr_A100_v4 --vms 128 --model gpt3-175b --gbs 1536 --tp 8 --pp 8 \
  --recompute full --tokens 300e9 --trace out/gpt3_175b_trace.json
step infer --sku Standard_ND96amsr_A100_v4 --vms 1 --model llama2-70b --weights fp16 --output-tokens-mean 290
step infer --sku Standard_ND128isr_GB300_v6 --vms 18 --model llama2-70b --weights fp4 --output-tokens-mean 274
# A long run: Llama 3 405B for 54 days as Meta ran it (checkpoints at Tectonic's 2 TB/s), and a
# GB300 job of 64 NVL72 racks; each prints its goodput.
step fleet --sku Standard_ND96isr_H100_v5 --vms 2048 --model llama3-405b --seq 8192 --gbs 2048 \
  --tp 8 --pp 16 --mbs 1 --sp --uneven-stages --zero 2 --days 54 --checkpoint-to lustre \
  --storage-bw 2TB/s --async-checkpoint --spares 16
step fleet --sku Standard_ND128isr_GB300_v6 --vms 1152 --model llama3-405b --seq 8192 --gbs 2304 \
  --tp 8 --pp 16 --sp --uneven-stages --zero 2 --days 30 --checkpoint-to lustre --async-checkpoint
# HPC: HPL on one ND A100 v4 VM, on 280 of them (Selene's June-2020 size), and on one GB300
# NVL72 rack, whose FP64 is 1/2000 of its BF16.
step hpc --sku Standard_ND96amsr_A100_v4 --vms 1 --bench hpl
step hpc --sku Standard_ND96amsr_A100_v4 --vms 280 --bench hpl
step hpc --sku Standard_ND128isr_GB300_v6 --vms 18 --bench hpl
rm -f out/sweep_gpt3.sqlite out/sweep_gpt3.sqlite-wal out/sweep_gpt3.sqlite-shm
step sweep examples/sweep_gpt3.yaml --out out/sweep_gpt3.sqlite --pareto step_time_s,cost_usd \
  --top 3 --by tokens_per_s
echo
echo "sweep written to out/sweep_gpt3.sqlite (sqlite3 out/sweep_gpt3.sqlite 'SELECT ...')"
echo "trace written to out/gpt3_175b_trace.json (open it in https://ui.perfetto.dev)"
