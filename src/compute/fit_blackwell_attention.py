#!/usr/bin/env python3
"""Blackwell fused attention of data/calibration/compute.yaml (blackwell `fused_attention`).

Reads NVIDIA's published cuDNN SDPA measurements on a B200
(data/calibration/blackwell_cudnn_sdpa_b200_2025-06.csv: cudnn-frontend's training benchmark,
PyTorch's cuDNN SDPA backend, cuDNN 9.10.2, bf16, causal, batch 1, 128 query / 8 K/V heads,
head_dim 128, one call timed between CUDA events after a synchronize, median of 10) and fits the
kernel curve ndtwin uses for Hopper (compute.h AttentionRateFit):

  rate = fraction * B / (B + overhead_blocks) of the dense 16-bit peak (B200: 2250 TFLOP/s),
  B = mean keys per query / 128 = (s + 1) / 256 for causal s x s (kv_block 128, Hopper's).

A single timed call also carries a fixed host-side cost (PyTorch's dispatch and cuDNN graph
lookup before the kernel starts: the 512- and 1024-token rows take 0.13-0.16 ms forward and
0.48-0.49 ms backward for microseconds of work). In training the kernels are queued ahead of
the GPU, so that cost is not the kernel's: each direction's time is fitted as
  t = t0 + W / (peak * fraction) * (1 + overhead_blocks / B),   W = the direction's FLOPs,
linear in (t0, 1 / fraction, overhead_blocks / fraction): least squares on relative residuals,
over the rows of 2048-32768 tokens; t0 is reported and not used.

GB300 (blackwell_ultra, compute.yaml `fused_attention_ratio`): the same benchmark run by NVIDIA on
one GB200 and one GB300 with the same software (cudnn-frontend commit b372d39, 2025-12: NGC
PyTorch 25.11, cuDNN 9.17.0, the cuDNN frontend's SDPA graph called directly, same shapes; rows in
data/calibration/blackwell_cudnn_sdpa_gb200_gb300_2025-12.csv). Each GPU's rows are fitted in the
form above at its own 16-bit peak (2500 TFLOP/s both), over the same 2048-32768-token rows, with
t0 = 0: these calls carry no PyTorch dispatch (the whole 512-token forward is 19-21 us), and a
free t0 is not physical here (backward: 230-300 us, above the whole 512-token backward, 65 us).
GB300's rate is Blackwell's curve x rate_GB300(B) / rate_GB200(B), so GB200 stays on the B200
curve and GB300 moves by the ratio measured at equal cuDNN. Run: python3
src/compute/fit_blackwell_attention.py
"""
import csv
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROWS = os.path.join(ROOT, "data", "calibration", "blackwell_cudnn_sdpa_b200_2025-06.csv")
ROWS_GB = os.path.join(ROOT, "data", "calibration", "blackwell_cudnn_sdpa_gb200_gb300_2025-12.csv")
PEAK16_B200 = 2250e12  # data/gpus/b200.yaml bf16 (HGX B200, 1000 W)
PEAK16_GB = 2500e12  # data/gpus/gb200.yaml and gb300.yaml bf16 (the same dense peak)
CUDNN_GB = "cuDNN frontend SDPA graph (bf16)"
FA2_GB = "torch SDPA FlashAttention-2 backend"
KV_BLOCK = 128
FIT_SEQS = (2048, 4096, 8192, 16384, 32768)


def rows(path=ROWS, gpu=None, backend=None):
    """{(pass, seq): (time_s, flop)} of a CSV's rows (of one gpu and backend where given)."""
    out = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            if (gpu and r["gpu"] != gpu) or (backend and r["backend"] != backend):
                continue
            s, h, d, b = int(r["seq"]), int(r["q_heads"]), int(r["head_dim"]), int(r["batch"])
            flop = 4.0 * b * h * s * s * d / 2 * (2.5 if r["pass"] == "bwd" else 1.0)
            t = float(r["time_ms"]) * 1e-3
            # The CSV's own count, up to its rounding (times to 1 us, rates to 1 TFLOP/s).
            tol = 0.01 + 0.5e-6 / t
            assert abs(flop / t / 1e12 / float(r["tflops"]) - 1) < tol, r
            out[(r["pass"], s)] = (t, flop)
    return out


def solve(a, v):
    """Gaussian elimination of the small dense system a x = v."""
    n = len(v)
    m = [row[:] + [v[i]] for i, row in enumerate(a)]
    for i in range(n):
        p = max(range(i, n), key=lambda r: abs(m[r][i]))
        m[i], m[p] = m[p], m[i]
        for r in range(n):
            if r != i:
                k = m[r][i] / m[i][i]
                m[r] = [x - k * y for x, y in zip(m[r], m[i])]
    return [m[i][n] / m[i][i] for i in range(n)]


def fit(data, direction, peak, with_t0=True):
    """(t0, fraction, overhead_blocks) of one direction's rows over FIT_SEQS (t0 = 0 without)."""
    basis = {}
    for s in FIT_SEQS:
        t, w = data[(direction, s)]
        blocks = (s + 1) / 2.0 / KV_BLOCK
        basis[s] = ([1.0] if with_t0 else []) + [w / peak, w / (peak * blocks)]
    n = len(basis[FIT_SEQS[0]])
    # Relative residuals: each row divided by its measured time.
    a = [[sum(basis[s][i] * basis[s][j] / data[(direction, s)][0] ** 2 for s in FIT_SEQS)
          for j in range(n)] for i in range(n)]
    v = [sum(basis[s][i] / data[(direction, s)][0] for s in FIT_SEQS) for i in range(n)]
    x = solve(a, v)
    t0, inv_f, c_over_f = x if with_t0 else [0.0] + x
    return t0, 1.0 / inv_f, c_over_f / inv_f


def rate(frac, c, s):
    blocks = (s + 1) / 2.0 / KV_BLOCK
    return frac * blocks / (blocks + c)


def gb300_ratio():
    """GB300 over GB200 (compute.yaml blackwell_ultra fused_attention_ratio)."""
    gpus = ("NVIDIA GB200", "NVIDIA GB300")
    cudnn = {g: rows(ROWS_GB, g, CUDNN_GB) for g in gpus}
    fa2 = {g: rows(ROWS_GB, g, FA2_GB) for g in gpus}
    for direction in ("fwd", "bwd"):
        fits = {g: fit(cudnn[g], direction, PEAK16_GB, with_t0=False) for g in gpus}
        name = "forward" if direction == "fwd" else "backward"
        print(f"blackwell_ultra fused attention ratio {name}: GB300 fraction="
              f"{fits[gpus[1]][1]:.4f} overhead_blocks={fits[gpus[1]][2]:.3f}; GB200 "
              f"fraction={fits[gpus[0]][1]:.4f} overhead_blocks={fits[gpus[0]][2]:.3f} "
              f"(cuDNN 9.17, of 2500 TFLOP/s, t0 = 0)")
        for s in sorted(k[1] for k in cudnn[gpus[0]] if k[0] == direction):
            resid = []
            for g in gpus:
                t, w = cudnn[g][(direction, s)]
                resid.append(100 * (w / (PEAK16_GB * rate(*fits[g][1:], s)) / t - 1))
            fitted = rate(*fits[gpus[1]][1:], s) / rate(*fits[gpus[0]][1:], s)
            measured = cudnn[gpus[0]][(direction, s)][0] / cudnn[gpus[1]][(direction, s)][0]
            tag = "" if s in FIT_SEQS else " (not fitted)"
            print(f"  seq {s:6d}: GB300/GB200 speed fitted {fitted:.3f}, measured {measured:.3f};"
                  f" fit vs rows GB200 {resid[0]:+5.1f}%, GB300 {resid[1]:+5.1f}%{tag}")
        fa2_ratios = [fa2[gpus[0]][k][0] / fa2[gpus[1]][k][0] for k in fa2[gpus[0]]
                      if k[0] == direction]
        print(f"  FlashAttention-2 (PyTorch, same runs; not used): GB300/GB200 speed "
              f"{min(fa2_ratios):.3f}-{max(fa2_ratios):.3f} over 512-131072 tokens")


def main():
    data = rows()
    for direction in ("fwd", "bwd"):
        t0, frac, c = fit(data, direction, PEAK16_B200)
        print(f"blackwell fused attention {direction}: fraction={frac:.3f} "
              f"overhead_blocks={c:.2f} (host time per timed call t0={t0 * 1e6:.0f} us, not used)")
        for (d, s), (t, w) in sorted(data.items(), key=lambda kv: kv[0][1]):
            if d != direction:
                continue
            r = rate(frac, c, s)
            pred = t0 + w / (PEAK16_B200 * r)
            tag = "" if s in FIT_SEQS else " (not fitted)"
            print(f"  seq {s:6d}: measured {w / t / 1e12:7.1f} TFLOP/s, with t0 "
                  f"{100 * (pred / t - 1):+5.1f}%; kernel alone {r:.3f} of peak"
                  f" = {r * PEAK16_B200 / 1e12:.0f} TFLOP/s{tag}")
    gb300_ratio()


if __name__ == "__main__":
    main()
