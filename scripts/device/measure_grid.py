#!/usr/bin/env python3
"""A finer GEMM and attention grid on one lent GPU, for ndtwin's GEMM-by-shape and attention models.

Run on the device machine (PyTorch there); not part of the build or tests. Same CSV columns and
timing method as measure_kernels.py (CUDA events, median of 3 timed loops of >= MIN_TIME s).
argv[1]: output CSV. Shapes:
- training GEMMs of a GPT-3 175B layer (h 12288, ffn 49152) sharded by TP 1/2/4/8, at 512-8192
  tokens per micro-batch, in the three layouts of a training step: forward (A[m,k] B[k,n]), the
  input gradient (dY[m,n] W^T) and the weight gradient (X^T[k,m] dY[m,n]);
- a fine m sweep (64..1024) at n 10240, k 8192 and n 1536, k 12288: wave and tile quantization;
- FP8 serving GEMMs of Llama 2 70B (h 8192, ffn 28672, GQA 64/8) at TP 2/4/8, m 16..4096;
- causal SDPA forward and backward at GPT-3 (h 96) and Llama (h 64, 32) head counts, seq 2048-8192.
"""
import sys
import time

import torch

import measure_kernels as mk

SOURCE = "ndtwin device run scripts/device/measure_grid.py"


def gemm_layout(dtype, m, n, k, layout, label):
    """layout: fwd = A[m,k] @ B[k,n]; dgrad = A[m,k] @ W[n,k]^T; wgrad = X[k,m]^T... as torch sees it."""
    t = torch.bfloat16
    dev = mk.dev
    if layout == "fwd":
        a = torch.randn(m, k, device=dev, dtype=t)
        b = torch.randn(k, n, device=dev, dtype=t)
    elif layout == "nt":  # B stored [n,k] (nn.Linear weight), used transposed
        a = torch.randn(m, k, device=dev, dtype=t)
        b = torch.randn(n, k, device=dev, dtype=t).t()
    else:  # "tn": A stored [k,m] (activations saved for wgrad), used transposed
        a = torch.randn(k, m, device=dev, dtype=t).t()
        b = torch.randn(k, n, device=dev, dtype=t)
    c = torch.empty(m, n, device=dev, dtype=t)
    sec = mk.time_fn(lambda: torch.matmul(a, b, out=c))
    mk.add(f"GEMM {dtype} {label} {layout}", f"m x n x k = {m}x{n}x{k}",
           2.0 * m * n * k / sec / 1e12, "TFLOPS", f"{sec * 1e6:.2f} us per call")
    del a, b, c


def attention_heads(h, s_len, tokens=16384):
    import torch.nn.functional as F
    dev = mk.dev
    b = max(1, tokens // s_len)
    q = torch.randn(b, h, s_len, 128, device=dev, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(b, h, s_len, 128, device=dev, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(b, h, s_len, 128, device=dev, dtype=torch.bfloat16, requires_grad=True)
    fwd_flops = 4.0 * b * h * s_len * s_len * 128 / 2
    with torch.no_grad():
        t_f = mk.time_fn(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    g = torch.randn_like(out)

    def fb():
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        o.backward(g)
    t_fb = mk.time_fn(fb)
    t_b = max(t_fb - t_f, 1e-9)
    mk.add("attention train fwd (torch SDPA, causal)", f"b{b} h{h} d128 seq {s_len}",
           fwd_flops / t_f / 1e12, "TFLOPS", f"{t_f * 1e6:.1f} us")
    mk.add("attention train bwd (torch SDPA, causal)", f"b{b} h{h} d128 seq {s_len}",
           2.5 * fwd_flops / t_b / 1e12, "TFLOPS",
           f"(fwd+bwd {t_fb * 1e6:.1f} us) - fwd; 2.5 x forward FLOPs")
    del q, k, v, out, g


def main():
    out_csv = sys.argv[1]
    mk.SOURCE = SOURCE
    torch.backends.cuda.matmul.allow_tf32 = False
    t0 = time.time()
    try:
        h, f = 12288, 49152
        for tp in (1, 2, 4, 8):
            # (k, n) forward: QKV h -> 3h/tp, proj h/tp -> h, fc1 h -> f/tp, fc2 f/tp -> h
            for (k, n, name) in ((h, 3 * h // tp, "qkv"), (h // tp, h, "proj"),
                                 (h, f // tp, "fc1"), (f // tp, h, "fc2")):
                for m in (512, 2048, 8192):
                    mk.guard(gemm_layout, "bf16", m, n, k, "fwd", f"gpt3 tp{tp} {name}")
                # input gradient: dY[m,n] W[n,k] -> [m,k]; weight gradient: X^T[k,m] dY[m,n]
                mk.guard(gemm_layout, "bf16", 2048, k, n, "nt", f"gpt3 tp{tp} {name} dgrad")
                mk.guard(gemm_layout, "bf16", k, n, 2048, "tn", f"gpt3 tp{tp} {name} wgrad")
        for m in (64, 128, 192, 256, 320, 384, 448, 512, 640, 768, 896, 1024):
            mk.guard(gemm_layout, "bf16", m, 10240, 8192, "fwd", "m sweep")
            mk.guard(gemm_layout, "bf16", m, 1536, 12288, "fwd", "m sweep")
        for tp in (2, 4, 8):
            for (k, n) in ((8192, 10240 // tp), (8192 // tp, 8192), (8192, 57344 // tp),
                           (28672 // tp, 8192)):
                for m in (16, 64, 256, 1024, 4096):
                    mk.guard(mk.gemm, "fp8", m, n, k, f"llama70b tp{tp}")
        for (hh, s) in ((96, 2048), (64, 2048), (64, 4096), (64, 8192), (32, 2048), (32, 8192)):
            mk.guard(attention_heads, hh, s)
        torch.cuda.empty_cache()
    finally:
        mk.write_rows(out_csv)
        print(f"done in {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
