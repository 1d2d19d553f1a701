#!/usr/bin/env bash
# Regenerates the tour in README.md (between the tour markers) from real runs of build/ndtwin, so
# the README stays true as the product grows. Usage: scripts/readme_tour.sh [path/to/ndtwin]
set -euo pipefail
bin="${1:-build/ndtwin}"
mkdir -p out  # the tour writes a trace there, as make demo does
readme="$(dirname "$0")/../README.md"
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.body"' EXIT
# splice NAME: replace README's lines between <!-- NAME:begin --> and <!-- NAME:end --> with $tmp.body.
splice() {
  awk -v body="$tmp.body" -v b="<!-- $1:begin -->" -v e="<!-- $1:end -->" '
    $0 == b { print; while ((getline l < body) > 0) print l; skip = 1; next }
    $0 == e { skip = 0 }
    !skip { print }' "$readme" >"$tmp"
  cp "$tmp" "$readme"
}
# show TEXT MAXLINES ARGS...: a paragraph of text, then the command and its output (stdout and
# stderr, as a terminal shows them), cut to MAXLINES lines when longer.
show() {
  local text="$1" max="$2"; shift 2
  printf '%s\n\n```\n$ ndtwin %s\n' "$text" "$*"
  local out; out=$("$bin" "$@" 2>&1 || true)
  local n; n=$(printf '%s\n' "$out" | wc -l)
  if [ "$n" -gt "$max" ]; then
    printf '%s\n' "$out" | head -n "$max"
    printf '... (%d more lines)\n' $((n - max))
  else
    printf '%s\n' "$out"
  fi
  printf '```\n\n'
}
{
  show "The catalog: every VM size of the seeds and the family members with published measurements, each number with its source (\`sku show\` prints them, with the conflicts between sources)." 40 sku list
  show "One size in full (cut here):" 30 sku show Standard_ND40rs_v2
  show "The cluster graph of N VMs: GPUs, NVSwitches, PCIe switches, NICs and a rail-optimized fat tree; \`--path\` prints a route hop by hop, \`--dot\` writes Graphviz." 30 topo --sku Standard_ND96amsr_A100_v4 --vms 2 --path 0,8
  show "An NVL72 rack: 18 VMs of 4 GPUs in one NVLink domain." 20 topo --sku ND128isr_GB300_v6 --vms 18
  show "A collective sweep, like nccl-tests, with the algorithm and protocol NCCL's tuner would pick (\`--fidelity flow\` runs the max-min fair flow model instead of the closed form):" 40 collective --sku ND96isr_H100_v5 --vms 4 --op all_reduce --min-bytes 1K --max-bytes 4G --step-factor 16
  show "The model zoo (\`--model NAME\`; also inline flags, \`--model-file\` YAML or \`--hf-config config.json\`):" 40 model list
  show "One training iteration: strategy (omitted knobs are chosen), time, MFU, memory per GPU with its parts, a breakdown, the time and cost to train, and a Perfetto trace:" 30 train --sku Standard_ND96amsr_A100_v4 --vms 128 --model gpt3-175b --gbs 1536 --tp 8 --pp 8 --recompute full --tokens 300e9 --trace out/gpt3_175b_trace.json
  show "At scale: Llama 3 405B as Meta ran it on 16,384 H100s (Llama 3 paper, Table 4: 400 TFLOP/s per GPU; run with the stack \`meta-llama3-2024\` (data/stacks: what the paper says Meta ran, assumptions marked); our spot checks are in VALIDATION.md). \`--seq\` overrides the model's sequence length; fabric flags (\`--radix\`, \`--oversubscription\`, ...) reshape the assumed fat tree:" 12 train --sku Standard_ND96isr_H100_v5 --vms 2048 --model llama3-405b --seq 8192 --gbs 2048 --tp 8 --pp 16 --mbs 1 --stack meta-llama3-2024
  show "A long run: failures by component (rates fitted on Llama 3's 54 days), checkpoints to a storage target, restarts with hot spares, Azure's scale-set limits; goodput and cost from a seeded Monte Carlo (\`--trace\` writes one simulated run). The Llama 3 job for 54 days, checkpoints at Tectonic's 2 TB/s:" 20 fleet --sku Standard_ND96isr_H100_v5 --vms 2048 --model llama3-405b --seq 8192 --gbs 2048 --tp 8 --pp 16 --mbs 1 --stack meta-llama3-2024 --days 54 --checkpoint-to lustre --storage-bw 2TB/s --async-checkpoint --spares 16
  show "A configuration that does not fit (every knob given here; left out, they are searched) is an error that says what takes the memory and what would fit:" 10 train --sku Standard_ND96amsr_A100_v4 --vms 16 --model gpt3-175b --gbs 512 --tp 8 --pp 1 --recompute full --zero 1
  show "The planner: every priced size at 1,024 GPUs, every tp/pp/dp, recompute and ZeRO stage the stack's software runs (megatron-core-2024: 0 and 1; a note says which it cannot) (for an MoE model also every expert-parallel degree \`train\` accepts — a divisor of the experts dividing dp — or the one \`--ep\` fixes, with an \`ep\` column; micro-batch and VPP chosen per strategy), scored analytically, the best re-scored with the flow model, ranked by the cost to train (the last line: the train command that gives the best's numbers):" 30 plan train --model gpt3-175b --gbs 1536 --gpus 1024 --tokens 300e9 --objective cost --top 5
  show "The planner for a service: each size with 8 GPUs, each weight precision its GPUs compute natively, the deployment chosen per pair, ranked by dollars per million output tokens:" 20 plan infer --model llama2-70b --gpus 8 --output-tokens-mean 290 --objective cost
  rm -f out/tour_sweep.sqlite out/tour_sweep.sqlite-wal out/tour_sweep.sqlite-shm
  show "A sweep: any command over your own space (a YAML spec of fixed flags, a grid and zipped lists; here 48 GPT-3 training points), every point a row of SQLite holding the command's \`--json\` document, then the Pareto frontier (\`--top K --by COLUMN\` for the best; \`--resume\` finishes a killed run; \`mpirun -n N ndtwin sweep ...\` spreads it over processes and machines):" 20 sweep examples/sweep_gpt3.yaml --out out/tour_sweep.sqlite --pareto step_time_s,cost_usd
  show "An LLM service: MLPerf Llama-2-70B Offline on one H100 VM with FP8 (deployment knobs left out are chosen):" 30 infer --sku ND96isr_H100_v5 --vms 1 --model llama2-70b --weights fp8 --kv fp8 --output-tokens-mean 290
  show "The Server scenario: the highest Poisson rate that meets the p99 TTFT and TPOT limits:" 30 infer --sku ND96isr_H100_v5 --vms 1 --model llama2-70b --weights fp8 --kv fp8 --tp 2 --output-tokens-mean 290 --scenario server
  show "HPC: HPL on the GPUs (blocked LU with look-ahead: DGEMM on the FP64 tensor cores, panels, broadcasts and row swaps on the cluster graph; \`--mxp\` for HPL-MxP), and HPCG, STREAM, OSU latency/bandwidth/allreduce and a halo3d stencil's weak and strong scaling (\`--bench\`). A GB300 NVL72 rack's FP64 is 1/2000 of its BF16:" 16 hpc --sku Standard_ND128isr_GB300_v6 --vms 18 --bench hpl
  show "Accuracy against published measurements (full tables in VALIDATION.md):" 30 validate --suite training
  show "Bad input is one line on stderr and exit code 2:" 5 sku show ND97
  printf 'Every command takes `--json` (schemas `ndtwin.<command>/1`), e.g. `ndtwin --json train ...`.\n'
} >"$tmp.body"
splice tour
# The "From Python" session, from the module the same build made (scripts/readme_python.py).
pydir="$(dirname "$bin")/python"
{
  printf '```\n'
  PYTHONPATH="$pydir" /usr/bin/python3 "$(dirname "$0")/readme_python.py"
  printf '```\n'
} >"$tmp.body"
splice python
