#!/usr/bin/env python3
"""FP8 training GEMMs of one Llama 3 8B layer at 8,192 tokens, as Transformer Engine lays them out.

Run on the device machine (PyTorch there); not part of the build or tests.
    python3 scripts/device/measure_fp8train.py OUT.csv
Transformer Engine's FP8 linear layers run every GEMM as cuBLASLt's "TN" FP8 GEMM (both operands
K-major; TE makes the transposed copies with its cast-transpose kernels):
  fprop  Y[T,N]  = X[T,K] (e4m3)  . W[N,K]^T (e4m3)    fast accumulation
  dgrad  dX[T,K] = dY[T,N] (e5m2) . W^T[K,N]^T (e4m3)  split accumulator (TE's default recipe)
  wgrad  dW[N,K] = dY^T[N,T] (e5m2) . X^T[K,T]^T (e4m3)  split accumulator
torch._scaled_mm (tensor-wise scales) calls the same cuBLASLt FP8 GEMM. Each layout is timed
with both accumulation modes; BF16 references of the same shapes follow. Also timed: PyTorch's
own cast, transpose and amax kernels at the layer's activation shapes (TE fuses them; these are
an upper bound on its kernels). Timing: measure_kernels.time_fn (CUDA events, median of 3 loops
of >= MIN_TIME s after warm-up); random normal inputs.
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import measure_kernels as mk  # noqa: E402
import torch  # noqa: E402

T, H, NH, NKV, HD, FFN = 8192, 4096, 32, 8, 128, 14336
GEMMS = (("qkv", NH * HD + 2 * NKV * HD, H), ("proj", H, NH * HD), ("fc1 gate+up", 2 * FFN, H),
         ("fc2 down", H, FFN))
rows = []


def rec(op, layout, dtype, accum, m, n, k, sec):
    tf = 2.0 * m * n * k / sec / 1e12
    rows.append([mk.SYSTEM, op, layout, dtype, accum, m, n, k, f"{sec * 1e6:.2f}", f"{tf:.1f}"])
    print(f"{op:12s} {layout:6s} {dtype:10s} {accum:6s} {m:6d}x{n:6d}x{k:6d} {sec * 1e6:9.1f} us {tf:7.1f} TFLOP/s",
          flush=True)


def fp8(shape, dt):
    return (torch.randn(*shape, device=mk.dev) * 0.5).to(dt)


def main():
    out = sys.argv[1]
    e4, e5 = torch.float8_e4m3fn, torch.float8_e5m2
    one = torch.ones((), device=mk.dev, dtype=torch.float32)
    for name, n, k in GEMMS:
        # fprop: A = X [T,K] row-major, B = W [N,K] viewed as [K,N] column-major
        x, w = fp8((T, k), e4), fp8((n, k), e4)
        dy, wt, dyt, xt = fp8((T, n), e5), fp8((k, n), e4), fp8((n, T), e5), fp8((k, T), e4)
        cases = (("fprop", T, n, k, x, w.t()), ("dgrad", T, k, n, dy, wt.t()),
                 ("wgrad", n, k, T, dyt, xt.t()))
        for layout, m_, n_, k_, a, b in cases:
            for fast in (True, False):
                sec = mk.time_fn(lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one,
                                                          out_dtype=torch.bfloat16, use_fast_accum=fast))
                rec(name, layout, "fp8", "fast" if fast else "split", m_, n_, k_, sec)
        del x, w, dy, wt, dyt, xt
        a16 = torch.randn(T, k, device=mk.dev, dtype=torch.bfloat16)
        b16 = torch.randn(n, k, device=mk.dev, dtype=torch.bfloat16)
        sec = mk.time_fn(lambda: a16 @ b16.t())
        rec(name, "fprop", "bf16", "-", T, n, k, sec)
        del a16, b16
        torch.cuda.empty_cache()
    # PyTorch's own kernels for what TE fuses (cast_transpose, amax): activation [T, H] and the
    # MLP activation [T, FFN]
    for cols in (H, FFN):
        a = torch.randn(T, cols, device=mk.dev, dtype=torch.bfloat16)
        for what, fn, nbytes in (
                ("amax", lambda: a.abs().amax(), 2 * T * cols),
                ("cast e4m3", lambda: a.to(e4), 3 * T * cols),
                ("transpose bf16", lambda: a.t().contiguous(), 4 * T * cols),
                ("cast + transposed cast", lambda: (a.to(e4), a.t().contiguous().to(e4)), 4 * T * cols)):
            sec = mk.time_fn(fn)
            rows.append([mk.SYSTEM, f"elementwise {what}", f"[{T},{cols}]", "bf16->fp8", "-", T, cols, 0,
                         f"{sec * 1e6:.2f}", f"{nbytes / sec / 1e9:.0f} GB/s (minimal bytes)"])
            print(f"{what:24s} [{T},{cols}] {sec * 1e6:9.1f} us {nbytes / sec / 1e9:6.0f} GB/s", flush=True)
        del a
        torch.cuda.empty_cache()
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["system", "op", "layout", "dtype", "accumulation", "m", "n", "k", "us", "TFLOP_per_s"])
        w.writerows(rows)


if __name__ == "__main__":
    main()
