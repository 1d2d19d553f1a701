#!/usr/bin/env python3
"""The public serving spot checks of VALIDATION.md (Inference), run through `ndtwin infer`.
Never fitted: none of these figures is in ../shared/validation/calibration/serving.csv except the
GB200 FP4 row (fitted since the serving fit; listed for its before -> after).

Usage (repo root): python3 src/serve/spot_checks.py [--bin build/ndtwin] [--old]
  --old: the binary predates `--no-host-overlap` (a baseline build): the 2024 stack's trait flags
  (--no-host-overlap, --no-cuda-graphs, --tp-allreduce trtllm-2024) are left out.

Each line: case, measured, predicted, error. Measured values are the published ones:
- TensorRT-LLM v1.0 perf-overview (docs/source/performance/perf-overview.md @00f37686, Total Output
  Throughput per TP group, trtllm-bench, PyTorch backend, kv fraction 0.95 where it fits; request
  counts from the same page: 30000 for 128/128, 3000 for 128/2048, 500/2000 and 1000/1000, 1500
  for 2048/2048, per replica: the table runs one TP group). Run as `infer --vms 1 --tp T --pp 1
  --max-batch B --max-num-tokens M --input-len I --output-len O --requests N x replicas`
  (replicas = GPUs of the VM / T; B and M as trtllm-bench's max-throughput heuristic sets them,
  fit_serving.trtllm_bench_knobs, and --guaranteed-no-evict: trtllm-bench's default capacity
  scheduler); predicted per TP group = per-GPU tokens/s x TP. Mixtral runs with the same
  heuristic (trtllm-bench defaults).
- Azure's ~1.1M tokens/s of Llama 2 70B per ND GB300 v6 NVL72 rack (18 VMs), default dataset.
- MLPerf v4.1 NVIDIA 8x H200 Offline, 118.5 samples/s (requests/s), TP1 x 8, batch 806, 4,096
  tokens per iteration, 291.2 generated tokens per request; the 2024 stack's traits (no host
  overlap, no CUDA graphs, the TensorRT backend's all-reduce).
- Mixtral-8x7B on H200 (MoE): predictions only (no public figure in the repo to compare with).
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_serving import bench_args  # noqa: E402  (trtllm-bench's max batch / max num tokens)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
H100, H200 = "Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5"
GB300 = "Standard_ND128isr_GB300_v6"
REQ = {(128, 128): 30000, (128, 2048): 3000, (500, 2000): 3000, (1000, 1000): 3000,
       (2048, 2048): 1500}
GPUS = {H100: 8, H200: 8, "Standard_ND128isr_NDR_GB200_v6": 4}
TRT = [  # (model, sku, tp, weights, {(isl, osl): measured per TP group})
    ("llama3-8b", H100, 1, "fp8", {(128, 128): 28312, (128, 2048): 22714, (500, 2000): 17660,
                                   (1000, 1000): 15220, (2048, 2048): 9305}),
    ("llama3-8b", H200, 1, "fp8", {(128, 128): 27911, (128, 2048): 26221, (500, 2000): 20770,
                                   (1000, 1000): 17744, (2048, 2048): 12194}),
    ("llama3-70b", H100, 2, "fp8", {(128, 128): 6378, (500, 2000): 5222}),
    ("llama3-70b", H200, 1, "fp8", {(128, 128): 3803, (500, 2000): 3666}),
    ("llama3-70b", "Standard_ND128isr_NDR_GB200_v6", 1, "fp4",
     {(128, 128): 12189, (128, 2048): 11309, (500, 2000): 9028, (1000, 1000): 7326,
      (2048, 2048): 5646}),
]


def infer(binary, args):
    p = subprocess.run([binary, "infer", "--json"] + args, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(" ".join(args) + ": " + p.stderr.strip())
    return json.loads(p.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "ndtwin"))
    ap.add_argument("--old", action="store_true")
    a = ap.parse_args()

    def line(name, meas, pred):
        if meas is None:
            print("%-44s predicted %10.0f" % (name, pred))
        else:
            print("%-44s measured %10.0f predicted %10.0f  %+6.1f%%" %
                  (name, meas, pred, 100 * (pred / meas - 1)))

    for model, sku, tp, w, cases in TRT:
        for (isl, osl), meas in cases.items():
            j = infer(a.bin, ["--sku", sku, "--vms", "1", "--model", model, "--weights", w,
                              "--tp", str(tp), "--pp", "1", "--input-len", str(isl),
                              "--output-len", str(osl), "--requests",
                              str(REQ[(isl, osl)] * GPUS[sku] // tp)] +
                      bench_args(model, sku, w, "fp8", tp, isl, osl) + ["--cuda-graph-padding"])
            line("TRT-LLM v1.0 %s %s TP%d %d/%d" % (model, sku.split("_")[-2], tp, isl, osl), meas,
                 j["per_gpu_output_tokens_per_s"] * tp)
    j = infer(a.bin, ["--sku", GB300, "--vms", "18", "--model", "llama2-70b", "--weights", "fp4",
                      "--kv", "fp8"])
    line("GB300 NVL72 rack llama2-70b fp4 offline", 1.1e6, j["output_tokens_per_s"])
    v41 = ["--sku", H200, "--vms", "1", "--model", "llama2-70b", "--weights", "fp8", "--kv", "fp8",
           "--tp", "1", "--pp", "1", "--max-batch", "806", "--max-num-tokens", "4096",
           "--output-tokens-mean", "291.2"] + ([] if a.old else [
               "--no-host-overlap", "--no-cuda-graphs", "--tp-allreduce", "trtllm-2024"])
    j = infer(a.bin, v41)
    line("MLPerf v4.1 8x H200 Offline (requests/s x 1000)", 118.5e3, j["requests_per_s"] * 1e3)
    for isl, osl in ((128, 128), (1000, 1000)):
        j = infer(a.bin, ["--sku", H200, "--vms", "1", "--model", "mixtral-8x7b", "--weights",
                          "fp8", "--kv", "fp8", "--tp", "1", "--pp", "1", "--input-len",
                          str(isl), "--output-len", str(osl), "--requests",
                          str(REQ[(isl, osl)] * 8)] +
                  bench_args("mixtral-8x7b", H200, "fp8", "fp8", 1, isl, osl))
        line("Mixtral-8x7B H200 TP1 fp8 %d/%d tok/s/GPU" % (isl, osl), None,
             j["per_gpu_output_tokens_per_s"])
    j = infer(a.bin, ["--sku", H200, "--vms", "1", "--model", "mixtral-8x7b", "--weights", "fp8",
                      "--kv", "fp8", "--tp", "1", "--pp", "1", "--dataset", "mlperf-mixtral-8x7b"])
    line("Mixtral-8x7B H200 TP1 fp8 MLPerf dataset tok/s/GPU", None,
         j["per_gpu_output_tokens_per_s"])


if __name__ == "__main__":
    main()
