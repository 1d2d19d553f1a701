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
over the rows of 2048-32768 tokens; t0 is reported and not used. Run: python3
src/compute/fit_blackwell_attention.py
"""
import csv
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROWS = os.path.join(ROOT, "data", "calibration", "blackwell_cudnn_sdpa_b200_2025-06.csv")
PEAK16_B200 = 2250e12  # data/gpus/b200.yaml bf16 (HGX B200, 1000 W)
KV_BLOCK = 128
FIT_SEQS = (2048, 4096, 8192, 16384, 32768)


def rows():
    """{(pass, seq): (time_s, flop)} of the CSV."""
    out = {}
    with open(ROWS) as f:
        for r in csv.DictReader(f):
            s, h, d, b = int(r["seq"]), int(r["q_heads"]), int(r["head_dim"]), int(r["batch"])
            flop = 4.0 * b * h * s * s * d / 2 * (2.5 if r["pass"] == "bwd" else 1.0)
            t = float(r["time_ms"]) * 1e-3
            assert abs(flop / t / 1e12 / float(r["tflops"]) - 1) < 0.01, r  # the CSV's own count
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


def main():
    data = rows()
    for direction in ("fwd", "bwd"):
        basis = {}
        for s in FIT_SEQS:
            t, w = data[(direction, s)]
            blocks = (s + 1) / 2.0 / KV_BLOCK
            basis[s] = [1.0, w / PEAK16_B200, w / (PEAK16_B200 * blocks)]
        # Relative residuals: each row divided by its measured time.
        a = [[sum(basis[s][i] * basis[s][j] / data[(direction, s)][0] ** 2 for s in FIT_SEQS)
              for j in range(3)] for i in range(3)]
        v = [sum(basis[s][i] / data[(direction, s)][0] for s in FIT_SEQS) for i in range(3)]
        t0, inv_f, c_over_f = solve(a, v)
        frac, c = 1.0 / inv_f, c_over_f / inv_f
        print(f"blackwell fused attention {direction}: fraction={frac:.3f} "
              f"overhead_blocks={c:.2f} (host time per timed call t0={t0 * 1e6:.0f} us, not used)")
        for (d, s), (t, w) in sorted(data.items(), key=lambda kv: kv[0][1]):
            if d != direction:
                continue
            blocks = (s + 1) / 2.0 / KV_BLOCK
            rate = frac * blocks / (blocks + c)
            pred = t0 + w / (PEAK16_B200 * rate)
            tag = "" if s in FIT_SEQS else " (not fitted)"
            print(f"  seq {s:6d}: measured {w / t / 1e12:7.1f} TFLOP/s, with t0 "
                  f"{100 * (pred / t - 1):+5.1f}%; kernel alone {rate:.3f} of peak"
                  f" = {rate * PEAK16_B200 / 1e12:.0f} TFLOP/s{tag}")


if __name__ == "__main__":
    main()
