#!/usr/bin/env python3
"""Serving kernels of a small model on one lent GPU: Llama 3.1 8B (h 4096, ffn 14336, GQA 32/8).

Run on the device machine (PyTorch there); not part of the build or tests. Same CSV columns and
timing method as measure_kernels.py. argv[1]: output CSV. Rows:
- FP8 and BF16 GEMMs of one Llama 3.1 8B layer at TP1 (QKV 4096 -> 6144, O 4096 -> 4096,
  gate+up 4096 -> 28672, down 14336 -> 4096) and the LM head (4096 -> 128256), m = 1..8192;
- decode attention (one query per sequence, GQA 32/8, d 128, BF16 K/V) by batch and context:
  the K/V read rate;
- RMSNorm-like and elementwise kernels on [m, 4096] BF16 tensors: their time at small m is
  launch-bound, the floor a layer's ~10 small kernels pay per iteration.
"""
import sys
import time

import torch
import torch.nn.functional as F

import measure_kernels as mk

SOURCE = "ndtwin device run scripts/device/measure_serving.py"


def decode_attention(batch, ctx, hq=32, hkv=8):
    dev = mk.dev
    q = torch.randn(batch, hq, 1, 128, device=dev, dtype=torch.bfloat16)
    k = torch.randn(batch, hkv, ctx, 128, device=dev, dtype=torch.bfloat16)
    v = torch.randn(batch, hkv, ctx, 128, device=dev, dtype=torch.bfloat16)
    sec = mk.time_fn(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True))
    kv_bytes = 2.0 * batch * hkv * ctx * 128 * 2
    mk.add(f"attention decode (torch SDPA, GQA {hq}/{hkv})", f"batch {batch} ctx {ctx} d128",
           kv_bytes / sec / 1e12, "TB/s", f"K+V bytes read per call / time; {sec * 1e6:.1f} us")
    del q, k, v


def norm(m, h=4096):
    dev = mk.dev
    x = torch.randn(m, h, device=dev, dtype=torch.bfloat16)
    w = torch.randn(h, device=dev, dtype=torch.bfloat16)
    sec = mk.time_fn(lambda: F.rms_norm(x, (h,), w))
    mk.add("rmsnorm (torch F.rms_norm, bf16)", f"m {m} h {h}", sec * 1e6, "us per call",
           f"{2.0 * m * h * 2 / sec / 1e12:.3f} TB/s read+write")


def main():
    out_csv = sys.argv[1]
    mk.SOURCE = SOURCE
    torch.backends.cuda.matmul.allow_tf32 = False
    t0 = time.time()
    try:
        shapes = ((4096, 6144, "qkv"), (4096, 4096, "o"), (4096, 28672, "gate+up"),
                  (14336, 4096, "down"), (4096, 128256, "lm head"))
        for dt in ("fp8", "bf16"):
            for (k, n, name) in shapes:
                for m in (1, 16, 64, 256, 1024, 4096, 8192):
                    if dt == "fp8" and m < 16:
                        continue  # _scaled_mm wants m % 16 == 0
                    mk.guard(mk.gemm, dt, m, n, k, f"llama3.1-8b {name}")
        for (batch, ctx) in ((1, 2048), (16, 2048), (64, 2048), (256, 2048), (64, 8192),
                             (256, 8192), (512, 4096)):
            mk.guard(decode_attention, batch, ctx)
        for m in (1, 64, 256, 1024, 8192):
            mk.guard(norm, m)
    finally:
        mk.write_rows(out_csv)
        print(f"done in {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
