#!/usr/bin/env python3
"""Hopper GEMM model (compute.yaml hopper gemm, compute.cc) against every bf16 / fp8 GEMM row
ndtwin measured on its lent H100 and H200 (data/measured/*_{kernels,grid,serving}_2026-11-26.csv).

Usage: /usr/bin/python3 src/compute/check_hopper_gemm.py [--rows] [--shapes]
  prints the residual (model / measured TFLOP/s - 1; > 0: the model is optimistic) by card,
  precision and shape class; --rows prints every row, --shapes the small-model training layers.
A check, not a fit: the parameters are read from the model below (keep in step with compute.yaml).
"""
import csv
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fit_compute as fc  # noqa: E402

ROOT = fc.ROOT
FILES = {
    "H100": ["h100_kernels_2026-11-26.csv", "h100_grid_2026-11-26.csv",
             "h100_serving_2026-11-26.csv"],
    "H200": ["h200_kernels_2026-11-26.csv", "h200_grid_2026-11-26.csv",
             "h200_serving_2026-11-26.csv"],
}
CARD = {"H100": (132, 3350e9), "H200": (132, 4800e9)}
PEAK = {"fp16": 989.4e12, "fp8": 1978.9e12}
HBM = 0.8628
# compute.yaml hopper gemm: bf16 runs the fp8 fit (fraction of its own peak) with more_tiles.
FIT = {"fp16": (0.725, 3.0e-6, 2.5e-6), "fp8": (0.725, 3.0e-6, 2.5e-6)}
TILES = fc.TILES["hopper"]


def measured():
    """(card, precision, m, n, k, FLOP/s, label) of the bf16 / fp8 GEMM rows."""
    out = []
    for card, names in FILES.items():
        for name in names:
            with open(os.path.join(ROOT, "data", "measured", name)) as f:
                for r in csv.DictReader(f):
                    b = r["benchmark"]
                    if not b.startswith("GEMM") or "sustained" in b:
                        continue
                    prec = b.split()[1]
                    if prec not in ("bf16", "fp8"):
                        continue
                    p = "fp16" if prec == "bf16" else "fp8"
                    m, n, k = (int(x) for x in r["parameter"].split("=")[1].strip().split("x"))
                    out.append((card, p, m, n, k, float(r["value"]) * 1e12, b))
    return out


def model_time(card, p, m, n, k, fit=None, tiles=None, **kw):
    sms, bw = CARD[card]
    frac, launch, wave = fit or FIT[p]
    return fc.gemm_time(m, n, k, p, sms, bw, PEAK[p], tiles or TILES, frac, launch, wave, HBM,
                        **kw)


def residual(row, **kw):
    card, p, m, n, k, meas, _ = row
    return 2.0 * m * n * k / model_time(card, p, m, n, k, **kw) / meas - 1


def summary(rows, **kw):
    rs = [residual(r, **kw) for r in rows]
    if not rs:
        return "n/a"
    rms = math.sqrt(sum(math.log(1 + x) ** 2 for x in rs) / len(rs))
    mean = math.exp(sum(math.log(1 + x) for x in rs) / len(rs)) - 1
    return f"n={len(rs):3d} geo-mean {100 * mean:+6.1f}%  rms log {rms:.3f}"


def classes(row):
    """Shape classes a row belongs to (for the summary)."""
    _, _, m, n, k, _, _ = row
    out = []
    if m <= 64 or n <= 64:
        out.append("decode (a side <= 64)")
    elif min(m, n) < 1024:
        out.append("small (a side 128-1023)")
    else:
        out.append("large (m, n >= 1024)")
        out.append("large, k <= 4096" if k <= 4096 else "large, k > 4096")
        out.append("large, m*n < 32M" if m * n < 32 * 2 ** 20 else "large, m*n >= 32M")
    return out


def main():
    rows = measured()
    for card in CARD:
        for p in ("fp16", "fp8"):
            rs = [r for r in rows if r[0] == card and r[1] == p]
            print(f"{card} {'bf16' if p == 'fp16' else p}: {summary(rs)}")
            for c in sorted({c for r in rs for c in classes(r)}):
                print(f"   {c:26s} {summary([r for r in rs if c in classes(r)])}")
    if "--rows" in sys.argv:
        for r in sorted(rows, key=lambda r: (r[0], r[1], r[6], r[2], r[3], r[4])):
            card, p, m, n, k, meas, label = r
            pred = 2.0 * m * n * k / model_time(card, p, m, n, k)
            print(f"{card} {label:40s} {m:6d}x{n:6d}x{k:6d} measured {meas / 1e12:7.1f} model "
                  f"{pred / 1e12:7.1f} {100 * (pred / meas - 1):+6.1f}%")


if __name__ == "__main__":
    main()
