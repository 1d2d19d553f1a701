#!/usr/bin/env python3
"""Fits the `serving:` blocks of data/calibration/compute.yaml on
../shared/validation/calibration/serving.csv only (the repo's validation/calibration/ copy when
../shared is absent).

Usage (from the repo root, after building build/ndtwin):
  python3 src/serve/fit_serving.py            # residuals at the committed compute.yaml
  python3 src/serve/fit_serving.py --fit      # search the parameters, print the best and residuals
  python3 src/serve/fit_serving.py --fit --arch hopper

Every case runs the real model: `ndtwin --hw-data TMP infer ... --json` on a copy of data/ whose
compute.yaml carries the candidate parameters, so the fit and the C++ model cannot drift apart.
The measured value of each case is read from serving.csv by its exact `metric` text (none is
typed in here); the deployment is the one the row states (TP, precision, batch, token budget,
lengths). B200 has no Azure VM: the B200 rows run on a calibration-only copy of the ND H100 v5
layout (8 GPUs, NVSwitch) with `gpu: B200`, written into the temporary data dir, never into data/.

Mechanisms fitted per architecture (see compute.yaml `serving:` for what each means):
  gemm_fraction[p]        sustained fraction of the dense peak of the engine's GEMMs in precision p
  attention_fraction      fused-attention (FMHA / XQA) compute, fraction of the 16-bit dense peak
  attention_hbm_fraction  attention's K/V and Q/O traffic, fraction of memory_Bps
  iteration_overhead      fixed host cost per engine iteration (scheduling, launch of the graph)
  overhead_per_seq        host cost per sequence in the iteration (per-request bookkeeping,
                          sampling and detokenization set-up of the executor)
  nccl_efficiency         fraction of the standalone NCCL speed (coll/, fitted on nccl-tests
                          sweeps) an NCCL all-reduce reaches inside the engine's iteration
                          (data/serve/engine.yaml nccl_in_engine_efficiency; TensorRT-LLM's own
                          all-reduce kernels are not scaled)
  read_rtt_us             (Hopper: the only arch with 2024 rows) round trip of one remote 16-byte
                          load of TensorRT-LLM's 2024 all-reduce kernels, which bounds their read
                          rate at TP 2 (data/serve/engine.yaml remote_read_round_trip_2024,
                          serve/allreduce.h)
Cases: MLPerf v5.0 B200 (Offline tok/s/GPU; Server and Interactive mean TPOT at NVIDIA's target
rate), MLPerf v4.1 H100 TP2 and H200 TP1 Server mean TPOT at the measured rate, TensorRT-LLM
v1.0 / v0.20 Llama-3.3-70B and v0.14 Llama-3-70B tables, Azure's ND GB200 v6 trtllm-bench runs
(Llama-3-70B FP8 TP4, Llama-3.1-8B FP8 TP1). Mean TTFT rows are printed with weight 0 (queueing
near saturation, not an iteration time); the v0.14 H100 TP1 row (memory-capacity bound) too.
Rows the model refuses (20000/2000: longer than llama3-70b's 8,192-token context) are listed.
Each row runs with the serving stack of its source and year (data/stacks/): MLPerf v4.1 (August
2024) and TensorRT-LLM v0.14 (October 2024) with tensorrt-llm-2024 (C++ executor, host work
between GPU iterations); MLPerf v5.0 (2025), TensorRT-LLM v0.20 / v1.0 (PyTorch backend, 'starting
with v0.19') and Azure's 2025 trtllm-bench runs with tensorrt-llm-2025 (overlap scheduler on by
default). Only the stack's engine traits are applied (`--no-host-overlap`, `--no-cuda-graphs` where
the stack file says false, `--tp-allreduce` its all-reduce selection): every row states its own
engine settings or took trtllm-bench's tuned ones, so the stacks' build-default knobs (max batch,
block size) do not describe them. The trtllm-bench rows (TensorRT-LLM v0.20 / v1.0 tables, Azure's
runs) run with the max batch and max num tokens trtllm-bench's max-throughput heuristic sets
(trtllm_bench_knobs below) and its default capacity scheduler, GUARANTEED_NO_EVICT
(--guaranteed-no-evict), the perf-overview rows also with its padded CUDA graphs
(--cuda-graph-padding: llm_options.yml enable_padding, sizes to 8192; the v1.0 page states it, the
v0.20 rows are assumed to have run the same options). Llama 3.3 rows run with its 128k context
(--seq 131072), so the 20000/2000 rows are fitted too. FIT_JOBS=N runs N cases at once (default 2).
Objective: the weighted sum of squared log residuals (throughput rows: output tokens/s per GPU,
weight 1; Server/Interactive mean TPOT, weight 0.5: near saturation TPOT swings with capacity,
and the Interactive config is SECONDARY in serving.csv).
Search (--fit): damped Gauss-Newton in log-parameter space, 2 rounds, from compute.yaml's values
or --start ARCH.PARAM=VALUE (the committed fits' start points are in their `how:`).
Each evaluation runs every case (minutes on 2 cores); results are memoized per parameter set.
"""
import argparse
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(ROOT, "..", "shared", "validation", "calibration", "serving.csv")
LOCAL = os.path.join(ROOT, "validation", "calibration", "serving.csv")
CSV = SHARED if os.path.exists(SHARED) else LOCAL
BIN = os.environ.get("FIT_BIN", os.path.join(ROOT, "build", "ndtwin"))

H100 = "Standard_ND96isr_H100_v5"
H200 = "Standard_ND96isr_H200_v5"
GB200 = "Standard_ND128isr_NDR_GB200_v6"
B200 = "Calibration_DGX_B200"  # written into the temporary data dir only (see the docstring)

SYSTEM_SKU = [("GB200", GB200), ("B200", B200), ("H200", H200), ("H100", H100)]


def measured(rows, metric, system=None):
    for r in rows:
        if r["metric"] == metric and (system is None or system in r["system"]):
            return float(r["value"])
    raise KeyError(metric)


def stated(rows, metric, field, pattern):
    """A number stated in the text of a row's `field` (conditions, note), e.g. its mean TTFT."""
    for r in rows:
        if r["metric"] == metric:
            return float(re.search(pattern, r[field]).group(1))
    raise KeyError(metric)


# trtllm-bench's max-throughput settings (TensorRT-LLM tensorrt_llm/bench/build/tuning.py,
# calc_engine_setting + finetune_setting, 0.17-1.0): when the command line gives no max batch size
# or max num tokens -- as in the perf-overview tables ("left many options at their default
# settings") and Azure's runs -- trtllm-bench sizes them from the KV cache that fits at the
# dataset's ISL + OSL: engine = params x bytes per weight (NVFP4 0.5, FP8 1), KV per token =
# 2 x layers x max(tp, kv_heads) x head_dim x bytes per KV element, requests = (GPU memory x tp -
# engine) x 0.95 / (KV per token x (ISL + OSL)); batch = min(requests, 4096) / pp rounded up to 32
# (below 256, at least 64), 128 (below 1024) or 256; tokens = min(batch x (1 + ISL/OSL), 32768)
# rounded up to 256 (at least 2048), 512 (below 8192) or 1024. GPU memory in GiB as NVML reports
# it; here the catalog's (what CUDA can allocate, within 0.5% of NVML's total). Then (bench/
# benchmark/utils/general.py get_settings): chunked prefill is off unless asked for
# (--enable_chunked_context, default False), so max num tokens is raised to at least the longest
# prompt + max batch. And trtllm-bench throughput runs the capacity scheduler its
# --scheduler_policy names, default guaranteed_no_evict (bench/benchmark/throughput.py): a request
# is admitted only when the KV cache holds all of it, so bench_args passes
# --guaranteed-no-evict. (Its --kv_cache_free_gpu_mem_fraction defaults to 0.90; the perf-overview
# "in many cases" used 0.95 in both, as the heuristic here assumes.)
MODEL_FACTS = {  # from `ndtwin model show` (data/models/): params, layers, kv_heads, head_dim
    "llama3-70b": (70553706496, 80, 8, 128),
    "llama3-8b": (8030261248, 32, 8, 128),
    "mixtral-8x7b": (46702792704, 32, 8, 128),
}
GPU_MEMORY_GIB = {B200: 178.35, GB200: 184.31, H100: 79.11, H200: 139.80}  # data/gpus/*.yaml memory


def trtllm_bench_knobs(model, sku, weights, kv, tp, pp, isl, osl):
    """(max_batch, max_num_tokens) trtllm-bench's max-throughput heuristic picks (see above)."""
    params, layers, kv_heads, head_dim = MODEL_FACTS[model]
    per_elem = {"fp4": 0.5, "fp8": 1.0}
    kv_token = 2 * layers * max(tp, kv_heads) * head_dim * per_elem[kv] / 1024 ** 3
    engine = params * per_elem[weights] / 1024 ** 3
    requests = (GPU_MEMORY_GIB[sku] * tp * pp - engine) * 0.95 / (kv_token * (isl + osl))
    raw_bs = min(requests, 4096) / pp
    raw_tok = min(raw_bs * (1 + isl / osl), 32768)
    if raw_bs < 256:
        bs = max(64, 32 * math.ceil(raw_bs / 32))
    elif raw_bs < 1024:
        bs = 128 * math.ceil(raw_bs / 128)
    else:
        bs = 256 * math.ceil(raw_bs / 256)
    if raw_tok < 4096:
        tok = max(2048, 256 * math.ceil(raw_tok / 256))
    elif raw_tok < 8192:
        tok = 512 * math.ceil(raw_tok / 512)
    else:
        tok = 1024 * math.ceil(raw_tok / 1024)
    return bs, max(tok, isl + bs)  # no chunked prefill: the longest prompt + max batch


def bench_args(model, sku, weights, kv, tp, isl, osl):
    """trtllm-bench throughput's engine settings: its max batch / max num tokens and its
    default capacity scheduler (GUARANTEED_NO_EVICT)."""
    bs, tok = trtllm_bench_knobs(model, sku, weights, kv, int(tp), 1, int(isl), int(osl))
    return ["--max-batch", str(bs), "--max-num-tokens", str(tok), "--guaranteed-no-evict"]


def sku_of(system):
    for key, sku in SYSTEM_SKU:
        if key in system:
            return sku
    raise KeyError(system)


def arch_of(sku):
    return "hopper" if sku in (H100, H200) else "blackwell"


def cases(rows):
    """(name, arch, args, metric, measured, weight) for every row the model can express."""
    out = []
    mlperf = ["--model", "llama2-70b", "--dataset", "mlperf-llama2-70b"]
    # --- MLPerf v5.0 DGX B200, Llama-2-70B, FP4 weights, FP8 KV, TP1 x 8 (1 VM of 8 GPUs).
    b200 = ["--sku", B200, "--vms", "1", "--weights", "fp4", "--kv", "fp8", "--tp", "1", "--pp",
            "1"] + mlperf + ["--output-tokens-mean", "271.7"]  # 363.895 samples/s -> 271.7
    big = ["--max-batch", "2048", "--max-num-tokens", "3584"]
    out.append(("MLPerf v5.0 B200 Offline tok/s/GPU", "blackwell", b200 + big, "per_gpu",
                measured(rows, "MLPerf v5.0 Llama2-70B-99.9 Offline output tokens/s (8 GPUs)") / 8,
                1.0))
    srv = b200 + big + ["--scenario", "server", "--qps", "364"]  # target_qps 364 (8 x 45.5)
    # Server and Interactive mean TPOT at the measured load: half weight (near saturation the
    # TPOT swings with the capacity; the Interactive config is SECONDARY in serving.csv). Mean
    # TTFT is mostly queueing at these loads: reported, not fitted (weight 0).
    out.append(("MLPerf v5.0 B200 Server mean TPOT", "blackwell", srv, "tpot_mean",
                measured(rows, "MLPerf v5.0 Llama2-70B Server mean TPOT", "DGX") / 1e3, 0.5))
    out.append(("MLPerf v5.0 B200 Server mean TTFT", "blackwell", srv, "ttft_mean",
                measured(rows, "MLPerf v5.0 Llama2-70B Server mean TTFT", "DGX") / 1e3, 0.0))
    inter = b200 + ["--max-batch", "768", "--max-num-tokens", "768", "--scenario", "interactive",
                    "--qps", "220"]  # target_qps 220
    out.append(("MLPerf v5.0 B200 Interactive mean TPOT", "blackwell", inter, "tpot_mean",
                measured(rows, "MLPerf v5.0 Llama2-70B-Interactive Server mean TPOT") / 1e3, 0.5))
    # --- MLPerf v4.1 Hopper Server (the 2024 server-mode iteration data): load = the measured rate.
    h100 = ["--sku", H100, "--vms", "1", "--weights", "fp8", "--kv", "fp8"] + mlperf
    s41 = h100 + ["--tp", "2", "--pp", "1", "--max-batch", "1024", "--max-num-tokens", "4096",
                  "--output-tokens-mean", "290.3", "--scenario", "server", "--qps",
                  "%.4f" % (measured(rows, "MLPerf v4.1 (Aug 2024) Llama2-70B-99.9 Server tokens/s "
                                     "(8 GPUs)") / 290.3)]
    out.append(("MLPerf v4.1 H100 TP2 Server mean TPOT", "hopper", s41, "tpot_mean",
                measured(rows, "MLPerf v4.1 Llama2-70B Server mean TPOT") / 1e3, 0.5))
    out.append(("MLPerf v4.1 H100 TP2 Server mean TTFT", "hopper", s41, "ttft_mean",
                stated(rows, "MLPerf v4.1 Llama2-70B Server mean TPOT", "conditions",
                       r"mean TTFT ([0-9.]+) ms") / 1e3, 0.0))
    h200 = ["--sku", H200, "--vms", "1", "--weights", "fp8", "--kv", "fp8", "--tp", "1", "--pp",
            "1", "--max-batch", "896", "--max-num-tokens", "4096", "--output-tokens-mean", "291.2",
            "--scenario", "server", "--qps",
            "%.4f" % (measured(rows, "MLPerf v4.1 Llama2-70B-99 Server tokens/s (8 GPUs)") / 291.2)
            ] + mlperf
    h200_metric = "MLPerf v4.1 Llama2-70B-99 Server tokens/s (8 GPUs)"
    out.append(("MLPerf v4.1 H200 TP1 Server mean TPOT", "hopper", h200, "tpot_mean",
                stated(rows, h200_metric, "note", r"mean TPOT ([0-9.]+) ms") / 1e3, 0.5))
    out.append(("MLPerf v4.1 H200 TP1 Server mean TTFT", "hopper", h200, "ttft_mean",
                stated(rows, h200_metric, "note", r"mean TTFT ([0-9.]+) ms") / 1e3, 0.0))
    # --- TensorRT-LLM perf-overview tables: trtllm-bench throughput, fixed lengths.
    pat = re.compile(r"TRT-LLM (v1\.0|v0\.20) Llama-3\.3-70B (FP4|FP8) TP(\d) total output tok/s "
                     r"ISL/OSL (\d+)/(\d+)")
    for r in rows:
        m = pat.fullmatch(r["metric"])
        if not m:
            continue
        ver, prec, tp, isl, osl = m.groups()
        sku = sku_of(r["system"])
        per_gpu = float(r["value"]) / (1 if "=per GPU" in r["unit"] else int(tp))
        # Llama 3.3 is Llama 3 70B's architecture with a 128k context (config.json
        # max_position_embeddings 131072): --seq lets the 20000/2000 rows run.
        args = ["--sku", sku, "--vms", "1", "--model", "llama3-70b", "--seq", "131072",
                "--weights", prec.lower(), "--kv", "fp8", "--tp", tp, "--pp", "1",
                "--input-len", isl, "--output-len", osl] + bench_args(
                    "llama3-70b", sku, prec.lower(), "fp8", tp, isl, osl) + [
                        "--cuda-graph-padding"]  # the perf-overview's llm_options.yml
        out.append(("TRT-LLM %s %s 70B %s TP%s %s/%s" % (ver, sku.split("_")[-2] if sku != B200
                                                          else "B200", prec, tp, isl, osl),
                    arch_of(sku), args, "per_gpu", per_gpu, 1.0))
    # --- TensorRT-LLM v0.14 (Oct 2024) Hopper table, FP8, in-flight batching at max load. The
    # H100 TP1 row is limited by memory capacity (70 GB of weights on 80 GB), not iteration time:
    # reported, not fitted.
    pat = re.compile(r"TRT-LLM v0\.14 LLaMA-v3-70B FP8 TP(\d) (?:total tok/s )?ISL/OSL (\d+)/(\d+)")
    for r in rows:
        m = pat.fullmatch(r["metric"])
        if not m:
            continue
        tp, isl, osl = m.groups()
        sku = sku_of(r["system"])
        args = ["--sku", sku, "--vms", "1", "--model", "llama3-70b", "--weights", "fp8", "--kv",
                "fp8", "--tp", tp, "--pp", "1", "--max-num-tokens", "8192", "--input-len", isl,
                "--output-len", osl]
        out.append(("TRT-LLM v0.14 %s 70B FP8 TP%s %s/%s" % (sku.split("_")[-2], tp, isl, osl),
                    "hopper", args, "per_gpu", float(r["value"]) / int(tp),
                    0.0 if sku == H100 and tp == "1" else 1.0))
    # --- Azure ND GB200 v6 trtllm-bench, FP8, 1000 requests.
    pat = re.compile(r"TRT-LLM Llama-3-70B FP8 TP4 throughput ISL/OSL (\d+)/(\d+)")
    for r in rows:
        m = pat.fullmatch(r["metric"])
        if not m:
            continue
        isl, osl = m.groups()
        args = ["--sku", GB200, "--vms", "1", "--model", "llama3-70b", "--weights", "fp8", "--kv",
                "fp8", "--tp", "4", "--pp", "1", "--input-len", isl, "--output-len", osl,
                "--requests", "1000"] + bench_args("llama3-70b", GB200, "fp8", "fp8", 4, isl,
                                                   osl)
        out.append(("Azure GB200 70B FP8 TP4 %s/%s" % (isl, osl), "blackwell", args, "per_gpu",
                    float(r["value"]) / 4, 1.0))
    pat = re.compile(r"TRT-LLM Llama-3\.1-8B FP8 TP1 throughput ISL/OSL (\d+)/(\d+)")
    for r in rows:
        m = pat.fullmatch(r["metric"])
        if not m:
            continue
        isl, osl = m.groups()
        args = ["--sku", GB200, "--vms", "1", "--model", "llama3-8b", "--weights", "fp8", "--kv",
                "fp8", "--tp", "1", "--pp", "1", "--input-len", isl, "--output-len", osl,
                "--requests", "1000"] + bench_args("llama3-8b", GB200, "fp8", "fp8", 1, isl,
                                                   osl)
        out.append(("Azure GB200 8B FP8 TP1 %s/%s" % (isl, osl), "blackwell", args, "per_gpu",
                    float(r["value"]), 1.0))
    return out


STACK_2024, STACK_2025 = "tensorrt-llm-2024", "tensorrt-llm-2025"


def stack_of(name):
    """The serving stack of a case, by its source's year (see the docstring)."""
    return STACK_2024 if ("v4.1" in name or "v0.14" in name) else STACK_2025


def trait(data, stack, name):
    """The stack file's traits.NAME value, as written (true, false, "trtllm-2024", ...)."""
    text = open(os.path.join(data, "stacks", stack + ".yaml")).read()
    return re.search(r'^  %s: \{value: "?([\w.-]+)"?' % name, text, flags=re.M).group(1)


def stack_flags(data, stack):
    """The infer flags that give a run the stack's engine traits (not its knobs)."""
    flags = [] if trait(data, stack, "host_overlap") == "true" else ["--no-host-overlap"]
    flags += [] if trait(data, stack, "cuda_graphs") == "true" else ["--no-cuda-graphs"]
    return flags + ["--tp-allreduce", trait(data, stack, "tp_allreduce")]


def with_stacks(data, cases_):
    """Each case's args with its stack's engine traits: host overlap, CUDA graphs, TP all-reduce."""
    out = []
    for c in cases_:
        args = list(c[2]) + stack_flags(data, stack_of(c[0]))
        out.append((c[0], c[1], args) + tuple(c[3:]))
    return out


def b200_vm(data):
    """A DGX B200 stand-in for the calibration runs: ND H100 v5's layout with 8 B200."""
    src = open(os.path.join(data, "vms", "standard_nd96isr_h100_v5.yaml")).read()
    text = re.sub(r'^name: .*$', 'name: "%s"' % B200, src, flags=re.M)
    text = re.sub(r'^aliases:\n(  - .*\n)+', 'aliases:\n  - "DGX B200 (calibration only)"\n', text,
                  flags=re.M)
    text = re.sub(r'^series: .*$', 'series: "DGX B200 (calibration only)"', text, flags=re.M)
    text = re.sub(r'^gpu: .*$', 'gpu: "B200"', text, flags=re.M)
    text = re.sub(r'^gpu_memory: .*$', 'gpu_memory: {value: "180 GB", source: "DGX B200"}', text,
                  flags=re.M)
    text = re.sub(r'^description: .*$', 'description: "8x B200, NVLink 5 + NVSwitch"', text,
                  flags=re.M)
    open(os.path.join(data, "vms", "calibration_dgx_b200.yaml"), "w").write(text)


def run(data, args, metric):
    t0 = time.time()
    p = subprocess.run([BIN, "--hw-data", data, "infer", "--json"] + args, capture_output=True,
                       text=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1]  # e.g. longer than the model's context
    j = json.loads(p.stdout)
    if TIMING:
        print("  %.1f s %s" % (time.time() - t0, " ".join(args)), file=sys.stderr)
    if metric == "per_gpu":
        return j["per_gpu_output_tokens_per_s"], ""
    if metric == "tpot_mean":
        return j["tpot_s"]["mean"], ""
    if metric == "ttft_mean":
        return j["ttft_s"]["mean"], ""
    raise KeyError(metric)


# The fitted parameters of one arch's `serving:` block, in the order the search visits them.
PARAMS = {
    "blackwell": ["fp4", "fp8", "attention_fraction", "attention_hbm_fraction",
                  "iteration_overhead_ms", "overhead_per_seq_us", "nccl_efficiency"],
    "hopper": ["fp8", "attention_fraction", "attention_hbm_fraction", "iteration_overhead_ms",
               "overhead_per_seq_us", "nccl_efficiency", "read_rtt_us"],
}
UPPER = {"fp4": 1.0, "fp8": 1.0, "attention_fraction": 1.0, "attention_hbm_fraction": 1.0,
         "iteration_overhead_ms": 100.0, "overhead_per_seq_us": 1000.0, "nccl_efficiency": 1.0,
         "read_rtt_us": 20.0}
# nccl_efficiency lives in data/serve/engine.yaml nccl_in_engine_efficiency (by arch), the others
# in compute.yaml's serving blocks.
NCCL_ENTRY = re.compile(r'^(  (\w+): \{value: ")([0-9.]+)(%")', flags=re.M)


def read_nccl(engine_text):
    block = engine_text.split("nccl_in_engine_efficiency:\n", 1)[1]
    return {m.group(2): float(m.group(3)) / 100 for m in NCCL_ENTRY.finditer(block)}


def write_nccl(engine_text, arch, value):
    head, block = engine_text.split("nccl_in_engine_efficiency:\n", 1)
    block = NCCL_ENTRY.sub(lambda m: m.group(1) + ("%.4g" % (100 * value) if m.group(2) == arch
                                                  else m.group(3)) + m.group(4), block)
    return head + "nccl_in_engine_efficiency:\n" + block


# read_rtt_us lives in data/serve/engine.yaml remote_read_round_trip_2024 (by arch, in us).
RTT_HEAD = "remote_read_round_trip_2024:\n"
RTT_ENTRY = re.compile(r'^(  (\w+): \{value: ")([0-9.]+)( us")', flags=re.M)


def rtt_block(engine_text):
    head, rest = engine_text.split(RTT_HEAD, 1)
    n = 0  # the block: its indented lines
    for line in rest.splitlines(True):
        if not line.startswith("  "):
            break
        n += len(line)
    return head, rest[:n], rest[n:]


def read_rtt(engine_text):
    _, block, _ = rtt_block(engine_text)
    return {m.group(2): float(m.group(3)) for m in RTT_ENTRY.finditer(block)}


def write_rtt(engine_text, arch, value):
    head, block, tail = rtt_block(engine_text)
    block = RTT_ENTRY.sub(lambda m: m.group(1) + ("%.4g" % value if m.group(2) == arch
                                                  else m.group(3)) + m.group(4), block)
    return head + RTT_HEAD + block + tail


BLOCK = re.compile(r"(  - arch: (\w+)\n(?:    .*\n|      .*\n)*?)(    serving:\n(?:      .*\n)+)")


def read_params(yaml_text):
    """{arch: {param: value}} from the `serving:` blocks of compute.yaml."""
    out = {}
    for m in BLOCK.finditer(yaml_text):
        arch, block = m.group(2), m.group(3)
        v = {}
        for key in ("fp4", "fp8"):
            g = re.search(r"^        %s: ([0-9.]+)$" % key, block, flags=re.M)
            if g:
                v[key] = float(g.group(1))
        for key in ("attention_fraction", "attention_hbm_fraction"):
            v[key] = float(re.search(r"%s: ([0-9.]+)" % key, block).group(1))
        v["iteration_overhead_ms"] = quantity(re.search(r'iteration_overhead: "([^"]+)"',
                                                        block).group(1)) * 1e3
        v["overhead_per_seq_us"] = quantity(re.search(r'overhead_per_seq: "([^"]+)"',
                                                      block).group(1)) * 1e6
        out[arch] = v
    return out


def quantity(text):
    value, unit = text.split()
    return float(value) * {"s": 1.0, "ms": 1e-3, "us": 1e-6}[unit]


def write_params(yaml_text, arch, v):
    """compute.yaml text with `arch`'s serving numbers replaced by v."""
    def repl(m):
        if m.group(2) != arch:
            return m.group(0)
        block = m.group(3)
        for key in ("fp4", "fp8"):
            if key in v:
                block = re.sub(r"^(        %s: )[0-9.]+$" % key, r"\g<1>%.4g" % v[key], block,
                               flags=re.M)
        for key in ("attention_fraction", "attention_hbm_fraction"):
            block = re.sub(r"(%s: )[0-9.]+" % key, r"\g<1>%.4g" % v[key], block)
        block = re.sub(r'(iteration_overhead: )"[^"]+"',
                       r'\g<1>"%.4g ms"' % v["iteration_overhead_ms"], block)
        block = re.sub(r'(overhead_per_seq: )"[^"]+"', r'\g<1>"%.4g us"' % v["overhead_per_seq_us"],
                       block)
        return m.group(1) + block
    return BLOCK.sub(repl, yaml_text)


class Evaluator:
    def __init__(self, data, cases):
        self.data, self.cases = data, cases
        self.yaml_path = os.path.join(data, "calibration", "compute.yaml")
        self.base = open(self.yaml_path).read()
        self.engine_path = os.path.join(data, "serve", "engine.yaml")
        self.engine_base = open(self.engine_path).read()
        self.memo = {}

    def predict(self, arch, v):
        """[(case, predicted or None, note)] with arch's serving block set to v."""
        key = (arch, tuple(sorted(v.items())))
        if key in self.memo:
            return self.memo[key]
        open(self.yaml_path, "w").write(write_params(self.base, arch, v))
        engine = write_nccl(self.engine_base, arch, v.get("nccl_efficiency", 1.0))
        if "read_rtt_us" in v:
            engine = write_rtt(engine, arch, v["read_rtt_us"])
        open(self.engine_path, "w").write(engine)
        mine = [c for c in self.cases if c[1] == arch]
        jobs = {}
        with ThreadPoolExecutor(max_workers=JOBS) as pool:
            for c in mine:
                k = (tuple(c[2]), c[3])
                if k not in jobs:
                    jobs[k] = pool.submit(run, self.data, c[2], c[3])
        out = [(c,) + jobs[(tuple(c[2]), c[3])].result() for c in mine]
        self.memo[key] = out
        return out

    def objective(self, arch, v):
        e = 0.0
        for c, pred, _ in self.predict(arch, v):
            if pred is not None and pred > 0:
                e += c[5] * math.log(pred / c[4]) ** 2
        return e


def residuals(ev, arch, v):
    """sqrt(weight) x log(predicted / measured) of every fitted case the model runs."""
    return [math.sqrt(c[5]) * math.log(pred / c[4]) for c, pred, _ in ev.predict(arch, v)
            if c[5] > 0 and pred is not None and pred > 0]


def solve(a, b):
    """x with a x = b (Gaussian elimination with partial pivoting; a is small and square)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for i in range(n):
        piv = max(range(i, n), key=lambda r: abs(m[r][i]))
        m[i], m[piv] = m[piv], m[i]
        for r in range(n):
            if r != i and m[i][i] != 0:
                f = m[r][i] / m[i][i]
                m[r] = [x - f * y for x, y in zip(m[r], m[i])]
    return [m[i][n] / m[i][i] if m[i][i] != 0 else 0.0 for i in range(n)]


def fit(ev, arch, v, rounds=2, only=None):
    """Damped Gauss-Newton in log-parameter space (each step at most x2 or /2 per parameter):
    the Jacobian by one forward difference per parameter (x1.1), then a step that is halved until
    the objective drops. Returns the best v."""
    names = [p for p in PARAMS[arch] if p in v and v[p] > 0 and (not only or p in only)]
    r0 = residuals(ev, arch, v)
    best = sum(x * x for x in r0)
    print("start %s objective %.4f %s" % (arch, best, v))
    h = math.log(1.1)
    for _ in range(rounds):
        cols = []
        for p in names:
            w = dict(v)
            w[p] = min(UPPER[p], v[p] * 1.1)
            step = math.log(w[p] / v[p]) if w[p] != v[p] else h
            rp = residuals(ev, arch, w)
            cols.append([(x - y) / step for x, y in zip(rp, r0)])
        n = len(names)
        lam = 1e-3 * max(1e-9, max(sum(c * c for c in col) for col in cols))
        jtj = [[sum(a * b for a, b in zip(cols[i], cols[j])) + (lam if i == j else 0)
                for j in range(n)] for i in range(n)]
        jtr = [-sum(a * b for a, b in zip(cols[i], r0)) for i in range(n)]
        delta = [max(-math.log(2), min(math.log(2), d)) for d in solve(jtj, jtr)]
        improved = False
        for scale in (1.0, 0.5, 0.25):
            w = dict(v)
            for p, d in zip(names, delta):
                w[p] = min(UPPER[p], v[p] * math.exp(scale * d))
            rw = residuals(ev, arch, w)
            e = sum(x * x for x in rw)
            print("  step x%.2f: %s objective %.4f" %
                  (scale, {k: round(x, 4) for k, x in w.items()}, e))
            sys.stdout.flush()
            if e < best:
                v, r0, best, improved = w, rw, e, True
                break
        if not improved:
            break
    return v, best


def report(ev, arch, v):
    errs = []
    for c, pred, note in ev.predict(arch, v):
        name, _, _, _, meas, w = c
        if pred is None:
            print("%-46s %-9s measured %10.4g refused: %s" % (name, arch, meas, note))
            continue
        err = pred / meas - 1
        if w > 0:
            errs.append(abs(err))
        print("%-46s %-9s %-17s measured %10.4g predicted %10.4g  %+6.1f%%%s" %
              (name, arch, stack_of(name), meas, pred, 100 * err,
               "" if w > 0 else "  (not fitted)"))
    if errs:
        print("%s: %d fitted cases, mean |error| %.1f%%, max %.1f%%" %
              (arch, len(errs), 100 * sum(errs) / len(errs), 100 * max(errs)))


JOBS = int(os.environ.get("FIT_JOBS", "2"))
TIMING = os.environ.get("FIT_TIMING") == "1"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--arch", default="")
    ap.add_argument("--data", default=os.path.join(ROOT, "data"))
    ap.add_argument("--rounds", type=int, default=2, help="Gauss-Newton rounds (default 2)")
    ap.add_argument("--params", default="",
                    help="comma-separated parameters to fit (default: all of the arch's)")
    ap.add_argument("--start", action="append", default=[],
                    help="ARCH.PARAM=VALUE: start the search there instead of compute.yaml")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(CSV)))
    tmp = tempfile.mkdtemp(prefix="ndt_fit_serving_")
    data = os.path.join(tmp, "data")
    shutil.copytree(a.data, data)
    b200_vm(data)
    try:
        ev = Evaluator(data, with_stacks(data, cases(rows)))
        params = read_params(ev.base)
        for arch, e in read_nccl(ev.engine_base).items():
            params.setdefault(arch, {})["nccl_efficiency"] = e
        for arch, e in read_rtt(ev.engine_base).items():
            params.setdefault(arch, {})["read_rtt_us"] = e
        for item in a.start:
            key, value = item.split("=")
            arch, p = key.split(".")
            params[arch][p] = float(value)
        for arch in sorted(params):
            if a.arch and arch != a.arch:
                continue
            v = params[arch]
            if a.fit:
                v, _ = fit(ev, arch, v, rounds=a.rounds,
                           only=[p for p in a.params.split(",") if p])
                print("fitted %s: %s" % (arch, {k: round(x, 4) for k, x in v.items()}))
            report(ev, arch, v)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
