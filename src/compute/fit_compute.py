#!/usr/bin/env python3
"""Fits data/calibration/compute.yaml on ../shared/validation/calibration/microbench.csv only.

Usage: python3 src/compute/fit_compute.py  (from the repo root; prints the fit and residuals)

The model is the one of src/compute/compute.cc (keep them in step):
  GEMM   t = max(waves * (SMs Tm Tn 2 k / splits / (peak_p * frac_p) + wave_overhead),
                 bytes / (memory_Bps * hbm_fraction)) + launch
         tiles = ceil(m/Tm) ceil(n/Tn), waves = ceil(tiles / SMs),
         with split-K when tiles < SMs: splits = min(SMs // tiles, k // 256), waves =
         ceil(tiles splits / SMs), each wave doing k / splits; best of the two tile orientations;
         bytes = (m k + k n) * in_bytes + m n * 2 (16-bit output).
  HBM    hbm_fraction = mean(Copy, Mul, Add, Triad) / memory_Bps (Dot is read-only, excluded);
         GB200 has one 'HBM bandwidth, measured utilization' row (7.35 TB/s).
  Attn   attention_fraction = FlashAttention-2 forward TFLOP/s / dense fp16 peak.
  Std    unfused_attention_efficiency = the model's time of the unfused attention core
         (model/ops.cc UnfusedAttention: QK^T and PV batched GEMMs over the full s x s scores,
         softmax 4 B/elem forward and 6 B/elem backward, no dropout as the benchmark runs it with
         p = 0; the GEMMs' data and weight gradients) / the measured time of the 'Standard
         attention (PyTorch)' row: flash-attention's benchmark_flash_attention.py, non-causal,
         forward + backward, credited 3.5 x 4 b s^2 h d FLOPs, heads = 2048 / head_dim.
Per architecture, (gemm_fraction, launch, wave_overhead) minimise the sum of squared log
residuals of the GEMM TFLOP/s rows by grid search; Blackwell fits a separate fp4 fraction.
Peaks, SMs and bandwidths are the catalog's (data/gpus/*.yaml), copied below.
"""
import csv
import math
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CSV = os.path.join(ROOT, "..", "shared", "validation", "calibration", "microbench.csv")
# Kernels ndtwin measured itself on a lent H200 (data/measured/README.md). Only its FP64 rows are
# fitted (the DGEMM of `hpc`: microbench.csv has none); its BF16/FP8 rows are printed as a check
# of the fit above (bf16 uses the fp8 fraction of its own peak on Hopper), not fitted.
MEASURED = os.path.join(ROOT, "data", "measured", "h200_kernels_2026-11-26.csv")
MEASURED_SYSTEM = "ndtwin H200 (measured)"

# system -> (gpu, arch, sms, memory_Bps, {precision: peak FLOP/s}) from data/gpus/*.yaml;
# GB200 has no SM count in the catalog: 148 (sms_if_unknown of the blackwell calibration).
GPUS = {
    "ND A100 v4 (A100-SXM4-80GB)": ("A100-SXM4-80GB", "ampere", 108, 2039e9,
                                    {"fp16": 312e12}),
    "ND H100 v5": ("H100-SXM5-80GB", "hopper", 132, 3350e9, {"fp16": 989.4e12, "fp8": 1978.9e12}),
    "ND H200 v5": ("H200-141GB", "hopper", 132, 4800e9, {"fp16": 989.4e12, "fp8": 1978.9e12}),
    "ND GB200 v6": ("GB200", "blackwell", 148, 8000e9,
                    {"fp16": 2500e12, "fp8": 5000e12, "fp4": 10000e12}),
    MEASURED_SYSTEM: ("H200-141GB", "hopper", 132, 4800e9,
                      {"fp64": 67e12, "fp16": 989.4e12, "fp8": 1978.9e12}),
}
# CTA tiles per arch: the first is compute.yaml's `tile`, the rest its `more_tiles` (Hopper:
# cuBLAS's nvjet kernels also run 128x192 and 128x128 tiles, by their names in public profiles),
# for 16-bit GEMMs only (compute.cc): the fp8 rows fit better with the one tile.
TILES = {"ampere": [(128, 128)], "hopper": [(128, 256), (128, 192), (128, 128)],
         "blackwell": [(128, 256)]}
# Small-M kernels' CTA rows (compute.yaml `small_m_gemm`, x the arch's tile_n), tried on a GEMM
# side shorter than the first tile's rows, every precision (compute.cc): no calibration row has
# such a side (all >= 192), so they never change the fit; kept here so this file stays the model.
SMALL_M_TILES = {"ampere": [16, 32, 64]}
# fp4: NVFP4 values (0.5 B) + one E4M3 block scale per 16 elements (1/16 B), as cuBLASLt reads.
IN_BYTES = {"fp64": 8, "fp16": 2, "fp8": 1, "fp4": 0.5 + 1.0 / 16}
SPLIT_K_MIN = 256  # smallest K chunk of a split-K GEMM (not fitted)


def rows():
    with open(CSV) as f:
        for r in csv.DictReader(f):
            yield r


def measured_rows():
    """(precision, m, n, k, FLOP/s) of the measured GEMM rows (not the sustained ones)."""
    with open(MEASURED) as f:
        for r in csv.DictReader(f):
            b = r["benchmark"]
            if not b.startswith("GEMM") or "sustained" in b:
                continue
            p = {"fp64": "fp64", "bf16": "fp16", "fp8": "fp8"}[b.split()[1]]
            m, n, k = (int(x) for x in r["parameter"].split("=")[1].strip().split("x"))
            yield p, m, n, k, float(r["value"]) * 1e12


def orientations(tiles):
    for tm, tn in tiles:
        yield tm, tn
        yield tn, tm


def small_m(m, n, tiles, small_rows):
    """The small-M tiles a GEMM of m x n tries (compute.cc): rows x tile_n on a short side."""
    big_m, big_n = tiles[0]
    out = []
    for rows in small_rows:
        if m < big_m:
            out.append((rows, big_n))
        if n < big_m:
            out.append((big_n, rows))
    return out


def gemm_time(m, n, k, p, sms, bw, peak, tiles, frac, launch, wave_ovh, hbm, small_rows=()):
    best = None
    extra = small_m(m, n, tiles, small_rows)
    if p not in ("fp16", "bf16"):  # the extra tiles are the 16-bit GEMMs' (compute.cc)
        tiles = tiles[:1]
    for tm, tn in list(orientations(tiles)) + extra:
        tiles = math.ceil(m / tm) * math.ceil(n / tn)
        # Split-K / stream-K: fewer tiles than SMs split K (chunks of at least SPLIT_K_MIN).
        splits = max(1, min(sms // tiles, k // SPLIT_K_MIN))
        waves = math.ceil(tiles * splits / sms)
        c = waves * (sms * tm * tn * 2.0 * (k / splits) / (peak * frac) + wave_ovh)
        best = c if best is None else min(best, c)
    mem = ((m * k + k * n) * IN_BYTES[p] + m * n * 2) / (bw * hbm)
    return max(best, mem) + launch


def gemm_time_batched(m, n, k, batch, p, sms, bw, peak, tiles, frac, launch, wave_ovh, hbm,
                      nbytes):
    """gemm_time for `batch` GEMMs of one shape (tiles multiply) moving `nbytes`."""
    best = None
    for tm, tn in orientations(tiles):
        tiles = math.ceil(m / tm) * math.ceil(n / tn) * batch
        splits = max(1, min(sms // tiles, k // SPLIT_K_MIN))
        waves = math.ceil(tiles * splits / sms)
        c = waves * (sms * tm * tn * 2.0 * (k / splits) / (peak * frac) + wave_ovh)
        best = c if best is None else min(best, c)
    return max(best, nbytes / (bw * hbm)) + launch


def unfused_attention_time(sysname, param, fit, hbm, kernel_overhead):
    """Model time (s) and credited FLOPs of the benchmark's standard attention, fwd + bwd."""
    _, arch, sms, bw, peaks = GPUS[sysname]
    d = int(param.split("head_dim")[1].split(",")[0])
    b = int(param.split("batch")[1].split(",")[0])
    s = int(param.split("seq")[1].strip())
    heads = 2048 // d
    batch = b * heads
    frac, launch, wave = fit
    elems = batch * s * s
    # Both GEMM shapes of ops.cc: bytes = rows (k + n) 2 + batch k n 2.
    scores = (s, s, d, (batch * s * (d + s) + batch * d * s) * 2.0)
    context = (s, d, s, (batch * s * (s + d) + batch * s * d) * 2.0)
    shapes = [scores, context,            # forward
              (s, s, d, context[3]), (s, d, s, context[3]),   # context dgrad, wgrad
              (s, d, s, scores[3]), (d, s, s, scores[3])]     # scores dgrad, wgrad
    t = 0.0
    for m, n, k, nbytes in shapes:
        t += gemm_time_batched(m, n, k, batch, "fp16", sms, bw, peaks["fp16"], TILES[arch], frac,
                               launch, wave, hbm, nbytes)
    t += (4.0 + 6.0) * elems / (bw * hbm) + 2 * kernel_overhead
    return t, 3.5 * 4.0 * b * s * s * heads * d


# Hopper-native fused attention (compute.h AttentionRateFit): PyTorch SDPA's causal forward and
# backward at bf16, head_dim 128, on the lent H100 and H200 (data/measured/*_kernels_2026-11-26.csv;
# the 'attention train' rows are H100 only). rate = fraction * B / (B + overhead_blocks) of the
# dense 16-bit peak, B = mean keys per query / KV_BLOCK = (s + 1) / 2 / 128 for causal s x s.
# The grid files add 32/64/96 heads at seq 2048-8192 on both cards.
FUSED_ATTENTION_FILES = [os.path.join(ROOT, "data", "measured", f)
                         for f in ("h100_kernels_2026-11-26.csv", "h200_kernels_2026-11-26.csv",
                                   "h100_grid_2026-11-26.csv", "h200_grid_2026-11-26.csv")]
KV_BLOCK = 128
PEAK16_HOPPER = 989.4e12


def fused_attention_rows():
    """(direction, seq, measured TFLOP/s / peak, label) of the causal SDPA rows."""
    out = []
    for path in FUSED_ATTENTION_FILES:
        with open(path) as f:
            for r in csv.DictReader(f):
                b = r["benchmark"]
                if "causal" not in b or "SDPA" not in b or "decode" in b:
                    continue
                direction = "backward" if " bwd " in b else "forward"
                s = int(r["parameter"].split("seq")[1].strip())
                out.append((direction, s, float(r["value"]) * 1e12 / PEAK16_HOPPER,
                            f"{os.path.basename(path)[:9]} {b} {r['parameter']}"))
    return out


def fit_fused_attention():
    rows_ = fused_attention_rows()
    for direction in ("forward", "backward"):
        rs = [r for r in rows_ if r[0] == direction]
        best = None
        for fi in range(300, 901):
            frac = fi / 1000.0
            for ci in range(0, 401):
                c = ci * 0.05
                e = 0.0
                for _, s, meas, _ in rs:
                    blocks = (s + 1) / 2.0 / KV_BLOCK
                    e += math.log(frac * blocks / (blocks + c) / meas) ** 2
                if best is None or e < best[0]:
                    best = (e, frac, c)
        e, frac, c = best
        print(f"\nhopper fused attention {direction}: fraction={frac:.3f} "
              f"overhead_blocks={c:.2f} rms_log={math.sqrt(e / len(rs)):.4f}")
        for _, s, meas, label in rs:
            blocks = (s + 1) / 2.0 / KV_BLOCK
            pred = frac * blocks / (blocks + c)
            print(f"  {label}: measured {meas:.3f} of peak, model {pred:.3f} "
                  f"({100 * (pred / meas - 1):+.1f}%)")



# FP8 GEMMs with the split accumulator (compute.h GemmFit::split_accumulate_fraction): cuBLASLt's
# CUBLASLT_MATMUL_DESC_FAST_ACCUM = 0, which Transformer Engine runs for the FP8 dgrad and wgrad
# GEMMs (`_2X_ACC_DGRAD = True`, `_2X_ACC_WGRAD = True`; cublaslt_gemm.cu: fastAccuMode =
# use_split_accumulator ? 0 : 1) and torchao's Float8Linear for grad_input / grad_weight
# (Float8GemmConfig() default use_fast_accum=False). The microbenchmark rows above ran fast
# accumulation (superbench cublaslt_utils.cc sets FAST_ACCUM = 1 for FP8), so the fp8 fit is the
# fast kernel's. The ratio comes from ndtwin's own dense cuBLASLt FP8 GEMMs measured both ways in
# one session at the same shapes (torch._scaled_mm, tensor-wise scales, use_fast_accum False /
# True): the 'equal-groups-dense-ref' rows of data/measured/{h100_moe_fastaccum,h200_moe}_2026-11-27.csv.
SPLIT_ACC_FILES = [("H100", os.path.join(ROOT, "data", "measured", "h100_moe_fastaccum_2026-11-27.csv")),
                   ("H200", os.path.join(ROOT, "data", "measured", "h200_moe_2026-11-27.csv"))]
SPLIT_ACC_MIN_M = 1024  # rows from which the GEMM is a full wave or more on every shape (not fitted)


def split_accumulate_pairs():
    """(card, m, n, k, fast TFLOP/s, default TFLOP/s) per shape, mean over repeated rows."""
    out = []
    for card, path in SPLIT_ACC_FILES:
        d = {}
        with open(path) as f:
            for r in csv.DictReader(f):
                b = r["benchmark"]
                if b not in ("GEMM fp8 equal-groups-dense-ref",
                             "GEMM fp8 fastaccum equal-groups-dense-ref"):
                    continue
                m, n, k = (int(x) for x in r["parameter"].split("=")[1].strip().split("x"))
                mode = "fast" if "fastaccum" in b else "default"
                d.setdefault((m, n, k), {}).setdefault(mode, []).append(float(r["value"]))
        for (m, n, k), v in sorted(d.items(), key=lambda x: (x[0][1], x[0][2], x[0][0])):
            if "fast" in v and "default" in v:
                out.append((card, m, n, k, sum(v["fast"]) / len(v["fast"]),
                            sum(v["default"]) / len(v["default"])))
    return out


def fit_split_accumulate(fp8_fraction):
    """split_accumulate_fraction = fp8 fraction x geometric mean of default / fast TFLOP/s over
    the pairs with m >= SPLIT_ACC_MIN_M (the least-squares fit in log of one factor)."""
    pairs = split_accumulate_pairs()
    used = [p for p in pairs if p[1] >= SPLIT_ACC_MIN_M]
    ratio = math.exp(sum(math.log(d / f) for _, _, _, _, f, d in used) / len(used))
    rms = math.sqrt(sum(math.log(d / f / ratio) ** 2 for _, _, _, _, f, d in used) / len(used))
    print(f"\nhopper fp8 split accumulator: default / fast = {ratio:.4f} over {len(used)} pairs "
          f"(m >= {SPLIT_ACC_MIN_M}; rms log about it {rms:.3f}) -> split_accumulate_fraction "
          f"= {fp8_fraction:.3f} x {ratio:.4f} = {fp8_fraction * ratio:.3f}")
    for card, m, n, k, f, d in pairs:
        mark = "" if m >= SPLIT_ACC_MIN_M else "  (not fitted)"
        print(f"  {card} {m}x{n}x{k}: fast {f:7.1f} default {d:7.1f} TFLOP/s, "
              f"default / fast {d / f:.3f}{mark}")
    return fp8_fraction * ratio


def main():
    gemms, stream, attn, std_attn = {}, {}, {}, {}
    for r in rows():
        sysname = r["system"]
        if sysname not in GPUS:
            continue
        arch = GPUS[sysname][1]
        b = r["benchmark"]
        if b.startswith("GEMM") and "m x n x k" in r["parameter"]:
            p = "fp16" if "FP16" in b else "fp8" if "FP8" in b else "fp4"
            m, n, k = (int(x) for x in r["parameter"].split("=")[1].strip().split("x"))
            gemms.setdefault(arch, []).append((sysname, p, m, n, k, float(r["value"]) * 1e12))
        elif b.startswith("HBM") and r["parameter"] in ("Copy", "Mul", "Add", "Triad",
                                                         "measured utilization"):
            stream.setdefault(sysname, []).append(float(r["value"]) * 1e12)
        elif b.startswith("attention") and r["parameter"].startswith("FlashAttention"):
            attn[sysname] = float(r["value"]) * 1e12
        elif b.startswith("attention") and r["parameter"].startswith("Standard attention"):
            std_attn[sysname] = (r["parameter"], float(r["value"]) * 1e12)
    checks = []
    for p, m, n, k, v in measured_rows():
        if p == "fp64":
            gemms.setdefault("hopper", []).append((MEASURED_SYSTEM, p, m, n, k, v))
        else:
            checks.append((p, m, n, k, v))
    hbm = {}
    for s, v in stream.items():
        hbm[s] = sum(v) / len(v) / GPUS[s][3]
        print(f"hbm {s}: {hbm[s]:.4f}")
    arch_hbm = {"ampere": hbm["ND A100 v4 (A100-SXM4-80GB)"],
                "hopper": (hbm["ND H100 v5"] + hbm["ND H200 v5"]) / 2}
    arch_hbm["blackwell"] = hbm["ND GB200 v6"]  # the Azure blog's measured 7.35 TB/s row
    for s, v in attn.items():
        print(f"attention {s}: {v / GPUS[s][4]['fp16']:.4f}")
    fits = {}
    for arch, all_rs in gemms.items():
        tile = TILES[arch]
        for p in sorted({r[1] for r in all_rs}):
            rs = [r for r in all_rs if r[1] == p]
            best = None
            for launch in [x * 0.25e-6 for x in range(0, 41)]:
                for wave in [x * 0.25e-6 for x in range(0, 41)]:
                    for f in [0.40 + 0.005 * i for i in range(111)]:
                        e = 0.0
                        for sysname, _, m, n, k, meas in rs:
                            _, _, sms, bw, peaks = GPUS[sysname]
                            t = gemm_time(m, n, k, p, sms, bw, peaks[p], tile, f, launch, wave,
                                          arch_hbm[arch], SMALL_M_TILES.get(arch, ()))
                            e += math.log(2.0 * m * n * k / t / meas) ** 2
                        if best is None or e < best[0]:
                            best = (e, f, launch, wave)
            e, f, launch, wave = best
            fits[(arch, p)] = (f, launch, wave)
            print(f"\n{arch} {p}: fraction={f:.3f} launch={launch * 1e6:.2f}us "
                  f"wave_overhead={wave * 1e6:.2f}us hbm={arch_hbm[arch]:.4f} "
                  f"rms_log={math.sqrt(e / len(rs)):.4f}")
            for sysname, _, m, n, k, meas in rs:
                _, _, sms, bw, peaks = GPUS[sysname]
                t = gemm_time(m, n, k, p, sms, bw, peaks[p], tile, f, launch, wave,
                              arch_hbm[arch], SMALL_M_TILES.get(arch, ()))
                pred = 2.0 * m * n * k / t
                print(f"  {sysname:30s} {p} {m}x{n}x{k}: measured {meas / 1e12:8.1f} predicted "
                      f"{pred / 1e12:8.1f} TFLOP/s  {100 * (pred / meas - 1):+6.1f}%")
    # The measured H200 bf16 / fp8 rows against the fit (not fitted: a check).
    if checks:
        print("\ncheck (not fitted): measured H200 rows against the hopper fit")
        _, _, sms, bw, peaks = GPUS[MEASURED_SYSTEM]
        for p, m, n, k, meas in checks:
            f, launch, wave = fits[("hopper", "fp8")]
            t = gemm_time(m, n, k, p, sms, bw, peaks[p], TILES["hopper"], f, launch, wave,
                          arch_hbm["hopper"])
            pred = 2.0 * m * n * k / t
            print(f"  {p} {m}x{n}x{k}: measured {meas / 1e12:8.1f} predicted "
                  f"{pred / 1e12:8.1f} TFLOP/s  {100 * (pred / meas - 1):+6.1f}%")
    # Unfused attention: the 16-bit GEMM fit, else fp8's (compute.h GemmFor); kernel overhead =
    # that fit's launch.
    eff = {}
    for sysname, (param, meas) in std_attn.items():
        arch = GPUS[sysname][1]
        fit = fits.get((arch, "fp16"), fits.get((arch, "fp8")))
        t, flop = unfused_attention_time(sysname, param, fit, arch_hbm[arch], fit[1])
        e = t / (flop / meas)
        eff.setdefault(arch, []).append(e)
        print(f"standard attention {sysname}: measured {meas / 1e12:.1f} TFLOP/s, model "
              f"{flop / t / 1e12:.1f} at full efficiency -> efficiency {e:.4f}")
    for arch, v in eff.items():
        print(f"unfused_attention_efficiency {arch}: {sum(v) / len(v):.4f}")
    return fits


if __name__ == "__main__":
    fitted = main()
    fit_fused_attention()
    fit_split_accumulate(fitted[("hopper", "fp8")][0])
