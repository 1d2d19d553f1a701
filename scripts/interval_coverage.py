#!/usr/bin/env python3
"""Coverage of ndtwin's prediction intervals on the public spot checks of VALIDATION.md.

Usage (repo root, after building build/ndtwin):
  python3 scripts/interval_coverage.py [--bin build/ndtwin] [--jobs 2] [--data DIR]

Each case below is a published figure that is NOT in ../shared/validation/ (so `ndtwin validate`
never sees it and data/calibration/intervals.yaml is not built from it) and was never fitted:
the spot checks VALIDATION.md reports. The script runs the case's command with --json, reads
the headline number's interval (its class's p10/p90 of measured / predicted) and says whether
the published figure lies inside p10-p90 of the prediction. A rate's interval is [v p10, v p90];
each case compares a rate (TFLOP/s or tokens/s per GPU, requests/s, bus bandwidth), using the
ratio p10 = interval.p10 / value of the headline rate of the same run (the same class).
Per group it also prints the median width (half of p90 - p10 of measured / predicted, in percent
of the prediction): coverage alone rewards intervals that are merely wide.
Nothing here writes anything: it only reads what the intervals say, after the fact.

Left out, with the reason: Mixtral-8x7B on H200 (no public figure in the repo), the GB200 FP4
perf-overview rows and Azure's GB200 trtllm-bench runs (calibration data since issue 15), the
single-VM Azure NCCL sweeps (calibration data), torchtitan's H100 rows (a 96 GB, 500 W card
ndtwin does not model), one GPU per VM over InfiniBand (issue 15 states a percentage, not a
figure).
"""
import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src", "serve"))
from fit_serving import bench_args  # noqa: E402  (trtllm-bench's max batch / max num tokens)

H100, H200 = "Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5"
GB200, GB300 = "Standard_ND128isr_NDR_GB200_v6", "Standard_ND128isr_GB300_v6"
A100_80, A100_40 = "Standard_ND96amsr_A100_v4", "Standard_ND96asr_v4"


def train_tflops(j):
    """Model TFLOP/s per GPU and the ratio interval of the run's class (mfu_interval / mfu)."""
    iv = j["mfu_interval"]
    return j["model_tflops_per_gpu"], iv["p10"] / j["mfu"], iv["p90"] / j["mfu"], iv


def train_mfu_pct(j):
    iv = j["mfu_interval"]
    return 100 * j["mfu"], iv["p10"] / j["mfu"], iv["p90"] / j["mfu"], iv


def train_tokens_per_gpu(j):
    iv = j["mfu_interval"]
    return j["tokens_per_s"] / j["gpus"], iv["p10"] / j["mfu"], iv["p90"] / j["mfu"], iv


def infer_rate(value):
    """An extractor of a serving rate value(j) with the class ratios of the headline rate."""
    def get(j):
        iv = j["output_tokens_per_s_interval"]
        v = j["output_tokens_per_s"]
        return value(j), iv["p10"] / v, iv["p90"] / v, iv
    return get


def busbw(size_bytes):
    def get(j):
        for r in j["rows"]:
            if r["bytes"] == size_bytes:
                iv = r["busbw_GBps_interval"]
                v = r["busbw_GBps"]
                return v, iv["p10"] / v, iv["p90"] / v, iv
        raise KeyError(size_bytes)
    return get


def cases():
    """(group, name, published, unit, argv, extractor)."""
    out = []
    # --- Training: Llama 3 405B (arXiv:2407.21783 Table 4), Meta's stack, model TFLOP/s per GPU.
    llama = ["train", "--sku", H100, "--model", "llama3-405b", "--tp", "8", "--pp", "16", "--mbs",
             "1", "--stack", "meta-llama3-2024"]
    out.append(("training", "Llama 3 405B, 8,192 H100, 8k (Meta)", 430, "TFLOP/s/GPU",
                llama + ["--vms", "1024", "--seq", "8192", "--gbs", "2048"], train_tflops))
    out.append(("training", "Llama 3 405B, 16,384 H100, 8k (Meta)", 400, "TFLOP/s/GPU",
                llama + ["--vms", "2048", "--seq", "8192", "--gbs", "2048"], train_tflops))
    out.append(("training", "Llama 3 405B, 16,384 H100, 131k CP16 (Meta)", 380, "TFLOP/s/GPU",
                llama + ["--vms", "2048", "--seq", "131072", "--gbs", "128", "--cp", "16"],
                train_tflops))
    # Korthikanti et al. (arXiv:2205.05198): 530B on 2,240 A100, 54.2% MFU.
    out.append(("training", "Megatron 530B, 2,240 A100 (Korthikanti)", 54.2, "% MFU",
                ["train", "--sku", A100_80, "--vms", "280", "--model", "megatron-530b", "--gbs",
                 "2240", "--tp", "8", "--pp", "35", "--mbs", "1", "--vpp", "1", "--stack",
                 "megatron-lm-2022"], train_mfu_pct))
    # LLM Foundry (mosaicml/llm-foundry benchmarking README, 2023-10): MPT shapes inline.
    foundry = [  # (name, layers, hidden, seq, gpus, sku, mbs, gbs, recompute, measured tok/s/GPU)
        ("70B", 80, 8192, 2048, 64, A100_80, 8, 2048, "full", 410),
        ("30B", 48, 7168, 2048, 8, A100_80, 3, 504, "full", 916),
        ("13B", 40, 5120, 2048, 8, A100_80, 2, 48, "none", 2262),
        ("13B", 40, 5120, 8192, 8, A100_80, 5, 120, "full", 1795),
        ("7B", 32, 4096, 2048, 8, A100_80, 6, 96, "none", 4641),
        ("7B", 32, 4096, 8192, 8, A100_80, 8, 128, "full", 3206),
        ("3B", 32, 2560, 2048, 8, A100_80, 10, 160, "none", 10811),
        ("1B", 24, 2048, 2048, 8, A100_80, 14, 448, "none", 20513),
        ("13B", 40, 5120, 2048, 128, A100_40, 16, 2048, "full", 1972),
        ("7B", 32, 4096, 2048, 64, A100_40, 18, 1152, "full", 3665),
    ]
    for name, layers, d, seq, gpus, sku, mbs, gbs, rc, meas in foundry:
        out.append(("training", "LLM Foundry MPT %s seq %d, %d %s" % (
            name, seq, gpus, "A100 80GB" if sku == A100_80 else "A100 40GB"), meas, "tok/s/GPU",
            ["train", "--stack", "llm-foundry-2023", "--arch", "gpt", "--layers", str(layers),
             "--hidden", str(d), "--heads", str(d // 128), "--ffn", str(4 * d), "--vocab", "50368",
             "--seq", str(seq), "--sku", sku, "--vms", str(gpus // 8), "--gbs", str(gbs),
             "--mbs", str(mbs), "--tp", "1", "--pp", "1", "--recompute", rc],
            train_tokens_per_gpu))
    # torchtitan docs/performance.md (2024-04): 64 A100 80GB, seq 8192, local batch 1.
    titan = ["train", "--stack", "torchtitan-fsdp2-2024", "--tp", "1", "--pp", "1", "--sku",
             A100_80, "--vms", "8", "--seq", "8192", "--gbs", "64", "--mbs", "1"]
    out.append(("training", "torchtitan Llama 3 8B, 64 A100, selective AC", 2973, "tok/s/GPU",
                titan + ["--model", "llama3-8b", "--recompute", "selective"],
                train_tokens_per_gpu))
    out.append(("training", "torchtitan Llama 3 70B, 64 A100, full AC", 331, "tok/s/GPU",
                titan + ["--model", "llama3-70b", "--recompute", "full"], train_tokens_per_gpu))

    # NeMo performance summaries, FP8 (24.09 DGX-H100, 25.04 DGX-GB200), tokens/s per GPU, with
    # NeMo's own stack of each release (bf16 gradients; VALIDATION.md Training, fp8mem; 25.04's
    # FP8 current scaling: nemo-2025, VALIDATION.md gb405). GB200: 4 GPUs per VM.
    nemo = [  # (sku, vms, model, flags, measured tok/s/GPU)
        (H100, 1, "llama3-8b", "--gbs 128 --tp 1 --pp 1 --cp 2 --mbs 1", 12273),
        (H100, 8, "llama3-70b", "--gbs 128 --tp 4 --pp 4 --cp 2 --vpp 5 --mbs 1", 1524),
        (H100, 1, "llama2-7b", "--gbs 128 --tp 1 --pp 1 --mbs 1", 16934),
        (H100, 8, "llama2-70b", "--gbs 128 --tp 4 --pp 4 --vpp 20 --mbs 1", 1728),
        (H100, 64, "gpt3-175b", "--gbs 2048 --tp 4 --pp 8 --vpp 6 --mbs 2", 825),
        (GB200, 2, "llama3-8b", "--gbs 128 --tp 1 --pp 1 --mbs 2", 33099),
        (GB200, 32, "llama3-405b",
         "--gbs 64 --tp 4 --pp 8 --cp 2 --vpp 8 --mbs 1 --uneven-stages", 665),
        (GB200, 32, "gpt3-175b", "--gbs 256 --tp 4 --pp 4 --vpp 12 --mbs 2", 1804),
    ]
    for sku, vms, model, flags, meas in nemo:
        out.append(("training", "NeMo FP8 %s, %d %s" % (
            model, vms * (4 if sku == GB200 else 8), "GB200" if sku == GB200 else "H100"), meas,
            "tok/s/GPU", ["train", "--stack", "nemo-2025" if sku == GB200 else "nemo-2024",
                          "--precision", "fp8", "--sku", sku,
                          "--vms", str(vms), "--model", model] + flags.split(),
            train_tokens_per_gpu))

    # --- Serving: TensorRT-LLM v1.0 perf-overview, Hopper rows (src/serve/spot_checks.py's runs;
    # the GB200 FP4 rows are calibration data now). Output tokens/s per TP group.
    req = {(128, 128): 30000, (128, 2048): 3000, (500, 2000): 3000, (1000, 1000): 3000,
           (2048, 2048): 1500}
    trt = [
        ("llama3-8b", H100, 1, {(128, 128): 28312, (128, 2048): 22714, (500, 2000): 17660,
                                (1000, 1000): 15220, (2048, 2048): 9305}),
        ("llama3-8b", H200, 1, {(128, 128): 27911, (128, 2048): 26221, (500, 2000): 20770,
                                (1000, 1000): 17744, (2048, 2048): 12194}),
        ("llama3-70b", H100, 2, {(128, 128): 6378, (500, 2000): 5222}),
        ("llama3-70b", H200, 1, {(128, 128): 3803, (500, 2000): 3666}),
    ]
    for model, sku, tp, rows in trt:
        for (isl, osl), meas in rows.items():
            args = ["infer", "--sku", sku, "--vms", "1", "--model", model, "--weights", "fp8",
                    "--tp", str(tp), "--pp", "1", "--input-len", str(isl), "--output-len",
                    str(osl), "--requests", str(req[(isl, osl)] * 8 // tp)] + bench_args(
                        model, sku, "fp8", "fp8", tp, isl, osl) + ["--cuda-graph-padding"]
            out.append(("serving", "TRT-LLM v1.0 %s %s TP%d %d/%d" % (
                model, sku.split("_")[-2], tp, isl, osl), meas, "tok/s per TP group", args,
                infer_rate(lambda j, tp=tp: j["per_gpu_output_tokens_per_s"] * tp)))
    out.append(("serving", "Llama 2 70B FP4 per ND GB300 v6 NVL72 rack (Azure)", 1.1e6, "tok/s",
                ["infer", "--sku", GB300, "--vms", "18", "--model", "llama2-70b", "--weights",
                 "fp4", "--kv", "fp8"], infer_rate(lambda j: j["output_tokens_per_s"])))
    out.append(("serving", "MLPerf v4.1 8x H200 Offline (samples/s)", 118.5, "requests/s",
                ["infer", "--sku", H200, "--vms", "1", "--model", "llama2-70b", "--weights", "fp8",
                 "--kv", "fp8", "--tp", "1", "--pp", "1", "--max-batch", "806",
                 "--max-num-tokens", "4096", "--output-tokens-mean", "291.2",
                 "--no-host-overlap", "--no-cuda-graphs", "--tp-allreduce", "trtllm-2024"],
                infer_rate(lambda j: j["requests_per_s"])))
    out.append(("serving", "gpt-fast Llama 3 8B bf16, A100 80GB, batch 1 (torchao)", 95.64,
                "tok/s (1 / TPOT)",
                ["infer", "--sku", A100_80, "--vms", "1", "--model", "llama3-8b", "--weights",
                 "bf16", "--tp", "1", "--pp", "1", "--max-batch", "1", "--input-len", "128",
                 "--output-len", "256"], infer_rate(lambda j: 1 / j["tpot_s"]["mean"])))

    # --- Collectives: public figures not in validation/ (bus bandwidth, GB/s).
    gib = 1024 ** 3
    out.append(("collectives", "all_reduce 4 GiB, 8x H200 one VM (nccl-tests #272)", 475, "GB/s",
                ["collective", "--sku", H200, "--vms", "1", "--op", "all_reduce", "--min-bytes",
                 "4G", "--max-bytes", "4G"], busbw(4 * gib)))
    out.append(("collectives", "all_reduce 4 GiB, 4x ND H100 v5, NVLS+Tree (NCCL #1649 quote)",
                375, "GB/s",
                ["collective", "--sku", H100, "--vms", "4", "--op", "all_reduce", "--min-bytes",
                 "4G", "--max-bytes", "4G"], busbw(4 * gib)))
    out.append(("collectives", "all_reduce 4 GiB, 2x 8 H100, RoCE (NCCL #1221)", 430, "GB/s",
                ["collective", "--sku", H100, "--vms", "2", "--op", "all_reduce", "--min-bytes",
                 "4G", "--max-bytes", "4G"], busbw(4 * gib)))
    out.append(("collectives", "all_reduce 4 GiB, 4x 8 H100, RoCE (NCCL #1221)", 320, "GB/s",
                ["collective", "--sku", H100, "--vms", "4", "--op", "all_reduce", "--min-bytes",
                 "4G", "--max-bytes", "4G"], busbw(4 * gib)))
    # The measured rack run (coreweave/nccl-tests PR #43, 2025-02-20) ran the nccl2.25.1 container.
    nvl = ["collective", "--sku", GB200, "--vms", "18", "--op", "all_reduce", "--nccl-version",
           "2.25.1"]
    out.append(("collectives", "all_reduce 512 MiB, GB200 NVL72 rack (issue 15, derived)", 578,
                "GB/s", nvl + ["--min-bytes", "512M", "--max-bytes", "512M"],
                busbw(512 * 1024 ** 2)))
    out.append(("collectives", "all_reduce 8 GiB, GB200 NVL72 rack (issue 15, derived)", 850,
                "GB/s", nvl + ["--min-bytes", "8G", "--max-bytes", "8G"], busbw(8 * gib)))
    return out


def run(binary, data, case):
    group, name, meas, unit, argv, get = case
    p = subprocess.run([binary] + (["--hw-data", data] if data else []) + ["--json"] + argv,
                       capture_output=True, text=True)
    if p.returncode != 0:
        return case, None, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed"
    return case, get(json.loads(p.stdout)), ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "ndtwin"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--data", default="",
                    help="a data/ folder to run with (--hw-data), e.g. with an older intervals.yaml")
    a = ap.parse_args()
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        results = list(pool.map(lambda c: run(a.bin, a.data, c), cases()))
    print("| group | spot check | published | predicted | p10-p90 | class (cases) | inside |")
    print("|---|---|---:|---:|---:|---|---|")
    tally = {}
    widths = {}  # group -> half-widths (p90 - p10) / 2 of measured / predicted, in %
    for case, got, err in results:
        group, name, meas, unit, argv, _ = case
        if got is None:
            print("| %s | %s | %.4g %s | refused: %s | | | no |" % (group, name, meas, unit, err))
            inside = False
        else:
            v, r10, r90, iv = got
            inside = v * r10 <= meas <= v * r90
            widths.setdefault(group, []).append(50.0 * (r90 - r10))
            print("| %s | %s | %.4g %s | %.4g (%+.1f%%) | %.4g-%.4g | %s (%d%s) | %s |" % (
                group, name, meas, unit, v, 100 * (v / meas - 1), v * r10, v * r90, iv["class"],
                iv["cases"], ", default" if "default width" in iv["basis"] else "",
                "yes" if inside else ("no, above p90" if meas > v * r90 else "no, below p10")))
        n, k = tally.get(group, (0, 0))
        tally[group] = (n + 1, k + inside)
    total = sum(n for n, _ in tally.values())
    hits = sum(k for _, k in tally.values())
    print()
    def median(xs):
        xs = sorted(xs)
        m = len(xs) // 2
        return xs[m] if len(xs) % 2 else (xs[m - 1] + xs[m]) / 2 if xs else float("nan")

    for g in sorted(tally):
        n, k = tally[g]
        print("%s: %d of %d inside p10-p90 (%.0f%%), median width +-%.1f%%" % (
            g, k, n, 100.0 * k / n, median(widths.get(g, []))))
    print("all: %d of %d inside p10-p90 (%.0f%%), median width +-%.1f%%" % (
        hits, total, 100.0 * hits / total, median([w for ws in widths.values() for w in ws])))
    print("(width: half of p90 - p10 of measured / predicted, as a percentage of the prediction)")


if __name__ == "__main__":
    main()
