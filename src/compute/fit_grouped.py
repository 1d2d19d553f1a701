#!/usr/bin/env python3
"""The Hopper grouped (MoE) GEMM factors of data/calibration/compute.yaml (`grouped_gemm`).

Usage (repo root):
  python3 src/compute/fit_grouped.py               # the committed factors (H100 list, H200 list),
      # from ndtwin's own rows: scripts/device/measure_moe.py's 8-group "MoE equal groups fp8
      # fastaccum" rows (torch._scaled_grouped_mm on a lent H100 and H200, data/measured/)
  python3 src/compute/fit_grouped.py --measured CSV  # the same reading on another such CSV
  python3 src/compute/fit_grouped.py --deepgemm      # the previous factors, from DeepGEMM's rows
  python3 src/compute/fit_grouped.py --bf16          # the bf16 lists (`by_precision: bf16`), from
      # the same runs' "MoE grouped bf16" rows (torch._grouped_mm at Mixtral's routed loads)

Model (compute.cc, the hopper fp8 fit of compute.yaml): a grouped GEMM of G groups of R rows
(each R x n x k with its own weight) is priced as the dense model of G batched R x n x k GEMMs
(tiles, waves, bytes = G (R k + k n + 2 R n)), times the factor at R rows per group. The factor
at R = the geometric mean over the n x k shapes of (measured time - launch) / (modelled time -
launch); 1 where it reads below 1 (the dense fit's own scatter: contiguous 4096-8192-row groups
read 0.97). Nothing is searched: each factor is a direct reading.
"""
import argparse
import ast
import csv
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_compute import GPUS, TILES, gemm_time_batched  # noqa: E402

# BF16 on Hopper: the fp8 fit's fraction of the 16-bit peak, with every CTA tile (compute.yaml:
# "no 16-bit Hopper rows, so bf16/fp16 GEMMs use the fp8 fraction of their own (half) peak").

# The hopper fp8 fit (data/calibration/compute.yaml): fraction, launch, wave overhead, hbm.
FRACTION, LAUNCH, WAVE, HBM = 0.725, 3.0e-6, 2.5e-6, 0.8628

# DeepGEMM README (deepseek-ai/DeepGEMM @55ab91f, 2025-03-25, "Update performance"), H800 SXM5
# (the H100 SXM die: 132 SMs, 1979 TFLOP/s FP8, 3.35 TB/s), FP8 with fine-grained scaling:
# (groups, rows per group, n, k, TFLOP/s). Masked layout: every group full (tests/test_core.py
# of that commit times masked_m = m); contiguous: groups of equal rows.
DEEPGEMM = [
    (4, 8192, 4096, 7168, 1346), (4, 8192, 7168, 2048, 1214),
    (8, 4096, 4096, 7168, 1346), (8, 4096, 7168, 2048, 1214),
    (1, 1024, 4096, 7168, 1233), (1, 1024, 7168, 2048, 925),
    (2, 512, 4096, 7168, 1040), (2, 512, 7168, 2048, 916),
    (4, 256, 4096, 7168, 932), (4, 256, 7168, 2048, 815),
]


def model_time(g, r, n, k, system):
    _, _, sms, bw, peaks = GPUS[system]
    nbytes = g * (r * k + k * n + 2 * r * n)
    return gemm_time_batched(r, n, k, g, "fp8", sms, bw, peaks["fp8"], TILES["hopper"][:1],
                             FRACTION, LAUNCH, WAVE, HBM, nbytes)


def model_time_bf16(g, r, n, k, system):
    _, _, sms, bw, peaks = GPUS[system]
    nbytes = 2.0 * g * (r * k + k * n + 2 * r * n)
    return gemm_time_batched(r, n, k, g, "fp16", sms, bw, peaks["fp16"], TILES["hopper"],
                             FRACTION, LAUNCH, WAVE, HBM, nbytes)


def bf16_factors(path, system):
    """The "MoE grouped bf16" rows (gate_up and down of Mixtral at T tokens routed top-2 over 8
    experts, seeded): each priced as ndtwin prices an expert GEMM, 8 groups of the largest
    expert's load (model/op_builder.h grouped_rows, the expected largest load); the factor at that
    load = the geometric mean of the two shapes' (measured - launch) / (modelled - launch), 1
    where it reads below 1."""
    by_r = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if not r["benchmark"].startswith("MoE grouped bf16"):
                continue
            n, k = (int(x) for x in r["parameter"].split("=")[1].split("x"))
            loads = ast.literal_eval(re.search(r"loads (\[[^\]]*\])", r["note"]).group(1))
            meas = float(r["note"].split()[0]) * 1e-6  # "<us> us per call; loads [...]"
            g, rows = len(loads), max(loads)
            model = model_time_bf16(g, rows, n, k, system)
            ratio = (meas - LAUNCH) / (model - LAUNCH)
            print(f"  {r['parameter']:32s} largest load {rows:5d}: measured {meas * 1e6:8.1f} "
                  f"us, model {model * 1e6:8.1f} us, ratio {ratio:.3f}")
            by_r.setdefault(rows, []).append(ratio)
    return {r: max(1.0, math.prod(v) ** (1.0 / len(v))) for r, v in sorted(by_r.items())}


def factors(rows, system):
    """rows: (groups, rows per group, n, k, TFLOP/s) -> {rows per group: factor}."""
    by_r = {}
    for g, r, n, k, tflops in rows:
        meas = 2.0 * g * r * n * k / (tflops * 1e12)
        ratio = (meas - LAUNCH) / (model_time(g, r, n, k, system) - LAUNCH)
        print(f"  {g} x {r:5d} rows, n x k {n:5d} x {k:5d}: measured {meas * 1e6:8.1f} us, "
              f"model {model_time(g, r, n, k, system) * 1e6:8.1f} us, ratio {ratio:.3f}")
        by_r.setdefault(r, []).append(ratio)
    out = {}
    for r in sorted(by_r):
        v = by_r[r]
        out[r] = max(1.0, math.prod(v) ** (1.0 / len(v)))
    return out


MEASURED = {  # ndtwin's own rows (scripts/device/measure_moe.py on lent GPUs, 2026-11-27)
    "ND H100 v5": "data/measured/h100_moe_fastaccum_2026-11-27.csv",
    "ND H200 v5": "data/measured/h200_moe_2026-11-27.csv",
}


def measured_rows(path):
    """measure_moe.py's 8-group 'MoE equal groups fp8 fastaccum' rows, as DEEPGEMM's, less the
    points where fast accumulation reads slower than default accumulation at the same shape (a
    tile-selection glitch of torch's heuristic: fast accumulation does strictly less work)."""
    times = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if not r["benchmark"].startswith("MoE equal groups fp8"):
                continue
            p = r["parameter"].split()  # groups G x rows R n x k = NxK
            g, rr = int(p[1]), int(p[4])
            n, k = (int(x) for x in p[-1].split("x"))
            fast = r["benchmark"].endswith("fastaccum")
            times[(fast, g, rr, n, k)] = float(r["value"])
    rows = []
    for (fast, g, rr, n, k), tflops in sorted(times.items()):
        if not fast or g != 8:
            continue
        default = times.get((False, g, rr, n, k))
        if default is not None and tflops < default:
            print(f"  left out: {g} x {rr} rows, n x k {n} x {k}: fast accumulation {tflops:.0f} "
                  f"TFLOP/s < default {default:.0f}")
            continue
        rows.append((g, rr, n, k, tflops))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--measured", help="one measure_moe.py output CSV (with its system's model)")
    ap.add_argument("--deepgemm", action="store_true",
                    help="the previous reading, on DeepGEMM's published rows")
    ap.add_argument("--bf16", action="store_true",
                    help="the bf16 lists, from the same CSVs' 'MoE grouped bf16' rows")
    a = ap.parse_args()
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    if a.bf16:
        # The default-accumulation files carry the bf16 rows (the H100 fast-accumulation run was
        # EQUAL_ONLY=1).
        for system, p in (("ND H100 v5", "data/measured/h100_moe_2026-11-27.csv"),
                          ("ND H200 v5", MEASURED["ND H200 v5"])):
            print(f"{system}: bf16 grouped, measured / modelled time (launch excluded)")
            f = bf16_factors(os.path.join(root, p), system)
            if not f:
                sys.exit(f"no 'MoE grouped bf16' rows in {p}")
            print("slowdown: [" + ", ".join(f"{r}, {v:.3f}" for r, v in f.items()) + "]")
        return
    if a.deepgemm:
        runs = {"ND H100 v5": DEEPGEMM}  # H800 = H100 SXM's SMs, FP8 peak and HBM
    elif a.measured:
        system = "ND H200 v5" if "h200" in os.path.basename(a.measured).lower() else "ND H100 v5"
        runs = {system: measured_rows(a.measured)}
    else:
        runs = {s: measured_rows(os.path.join(root, p)) for s, p in MEASURED.items()}
    for system, rows in runs.items():
        if not rows:
            sys.exit(f"no 8-group 'MoE equal groups fp8 fastaccum' rows for {system}")
        print(f"{system}: measured / modelled time (launch excluded)")
        f = factors(rows, system)
        flat = ", ".join(f"{r}, {v:.3f}" for r, v in f.items())
        print(f"slowdown: [{flat}]")


if __name__ == "__main__":
    main()
