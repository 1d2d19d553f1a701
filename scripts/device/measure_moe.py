#!/usr/bin/env python3
"""Mixtral-8x7B expert GEMMs on one lent Hopper GPU: the grouped FP8 kernel against a dense FP8
GEMM of the same rows, for ndtwin's MoE serving model (VALIDATION.md, "MoE serving").

Run on the device machine (PyTorch there); not part of the build or tests. Same CSV columns and
timing method as measure_kernels.py (CUDA events, median of 3 timed loops of >= MIN_TIME s).
argv[1]: output CSV. First run 2026-11-27 on an H100 (data/measured/h100_moe_2026-11-27.csv); the
dense references (tensor-wise and rowwise FP8, BF16) were added after it, for the H200 run.

Question: does a CUTLASS SM90 grouped FP8 GEMM (PyTorch's torch._scaled_grouped_mm, the same
ptr-array grouped kernel family as TensorRT-LLM's Hopper MoE GEMM) reach the rate of a dense FP8
GEMM (torch._scaled_mm) over the same token-expert rows? ndtwin prices the grouped GEMM with the
dense fit; the held-out Mixtral serving checks are ~30% optimistic.

Cases, Mixtral (8 experts, top 2, hidden 4096, expert ffn 14336), T tokens routed uniformly at
random (seeded; each expert's rows rounded up to 16, the grouped kernel's alignment, noted):
- gate_up: [rows_e x 4096] x [4096 x 28672] per expert; down: [rows_e x 14336] x [14336 x 4096];
- grouped FP8 (rowwise scales), grouped BF16 (torch._grouped_mm), and one dense FP8 GEMM of all
  2T rows against one expert's weight (the dense fit's shape);
- the routing kernels at T tokens: top-2 of the softmax, the sort of the 2T expert ids, the
  permute (index_select of 2T rows of 4096) and the weighted unpermute.
TFLOPS are counted on the exact 2T rows (2 x rows x n x k).

First (2026-11-27), the equal-groups sweep the committed Hopper `grouped_gemm` factors
(data/calibration/compute.yaml) can be refitted on, on this kernel instead of DeepGEMM's:
- "MoE equal groups fp8": G groups of R rows each (no routing skew, every group full, as DeepGEMM's
  masked rows), torch._scaled_grouped_mm, at DeepGEMM's n x k (4096 x 7168, 7168 x 2048) and
  Mixtral's (28672 x 4096 gate_up, 4096 x 14336 down): G x R = 1 x 1024, 2 x 512, 4 x 256 (the
  DeepGEMM rows: same total rows), 8 x 16 ... 8 x 2048 (Mixtral's 8 experts, decode to prefill).
Then `python3 src/compute/fit_grouped.py --measured OUT.csv` prints the factor by rows per group
(geometric mean over the n x k of measured / modelled time, launch excluded, against the Hopper
fp8 fit) to paste into compute.yaml's `grouped_gemm: slowdown:`.
Budget: ~1-2 min of GPU time on an H100/H200 (about 110 timed cases of ~0.5 s); MAX_S (default
240) stops starting new cases after that many seconds, the rows done are written.
"""
import os
import time

import sys

import torch

import measure_kernels as mk

SOURCE = "ndtwin device run scripts/device/measure_moe.py"
E, TOPK, H, F = 8, 2, 4096, 14336
TOKENS = (128, 256, 512, 680, 1024, 2048, 4096, 8192)


def add(bench, param, value, unit, note=""):
    mk.rows.append([mk.SYSTEM, bench, param, f"{value:.6g}", unit, SOURCE, note])
    print(f"{bench:36s} {param:36s} {value:12.4g} {unit}  {note}", flush=True)


def loads(tokens):
    g = torch.Generator(device="cpu").manual_seed(tokens)
    ids = torch.rand(tokens, E, generator=g).topk(TOPK, dim=1).indices.flatten()
    exact = torch.bincount(ids, minlength=E).tolist()
    padded = [(x + 15) // 16 * 16 for x in exact]
    return exact, padded


def grouped(tokens, n, k, label):
    exact, padded = loads(tokens)
    rows = sum(padded)
    offs = torch.tensor(padded, device=mk.dev, dtype=torch.int32).cumsum(0, dtype=torch.int32)
    flop = 2.0 * sum(exact) * n * k
    note = f"loads {exact} (padded to 16: {rows} rows)"
    a8 = torch.randn(rows, k, device=mk.dev).to(torch.float8_e4m3fn)
    b8 = torch.randn(E, n, k, device=mk.dev).to(torch.float8_e4m3fn).transpose(-2, -1)
    sa = torch.ones(rows, device=mk.dev, dtype=torch.float32)
    sb = torch.ones(E, n, device=mk.dev, dtype=torch.float32)
    for fast in (False, True):
        sec = mk.time_fn(lambda: torch._scaled_grouped_mm(
            a8, b8, sa, sb, offs=offs, out_dtype=torch.bfloat16, use_fast_accum=fast))
        add(f"MoE grouped fp8{' fastaccum' if fast else ''} {label}",
            f"T {tokens} n x k = {n}x{k}", flop / sec / 1e12, "TFLOPS",
            f"{sec * 1e6:.2f} us per call; {note}")
    del a8, b8
    a16 = torch.randn(rows, k, device=mk.dev, dtype=torch.bfloat16)
    b16 = torch.randn(E, n, k, device=mk.dev, dtype=torch.bfloat16).transpose(-2, -1)
    sec = mk.time_fn(lambda: torch._grouped_mm(a16, b16, offs=offs, out_dtype=torch.bfloat16))
    add(f"MoE grouped bf16 {label}", f"T {tokens} n x k = {n}x{k}", flop / sec / 1e12, "TFLOPS",
        f"{sec * 1e6:.2f} us per call; {note}")
    del a16, b16
    torch.cuda.empty_cache()
    # The dense reference: all 2T rows against one weight (what the dense fit prices).
    mk.gemm("fp8", TOPK * tokens, n, k, f"moe-dense-ref {label} T {tokens}")
    dense_fp8(TOPK * tokens, n, k, f"moe-dense-ref {label} T {tokens}")
    mk.gemm("bf16", TOPK * tokens, n, k, f"moe-dense-ref {label} T {tokens}")


def dense_fp8(m, n, k, label, rowwise=True, fast=False):
    """One dense FP8 GEMM of m rows against one weight. Rowwise scales: torch routes these to
    CUTLASS, not cuBLAS (the grouped kernel's scaling without its grouping); tensor-wise: cuBLASLt,
    as mk.gemm. fast: fast accumulation (TensorRT-LLM's FP8 GEMMs)."""
    a = torch.randn(m, k, device=mk.dev).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=mk.dev).to(torch.float8_e4m3fn).t()
    if rowwise:
        sa = torch.ones(m, 1, device=mk.dev, dtype=torch.float32)
        sb = torch.ones(1, n, device=mk.dev, dtype=torch.float32)
    else:
        sa = sb = torch.ones((), device=mk.dev, dtype=torch.float32)
    sec = mk.time_fn(lambda: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb,
                                              out_dtype=torch.bfloat16, use_fast_accum=fast))
    kind = (" rowwise" if rowwise else "") + (" fastaccum" if fast else "")
    add(f"GEMM fp8{kind} {label}", f"m x n x k = {m}x{n}x{k}", 2.0 * m * n * k / sec / 1e12,
        "TFLOPS", f"{sec * 1e6:.2f} us per call")
    del a, b
    torch.cuda.empty_cache()


EQUAL_NK = ((4096, 7168), (7168, 2048), (2 * F, H), (H, F))
EQUAL_GR = ((1, 1024), (2, 512), (4, 256), (8, 16), (8, 32), (8, 64), (8, 128), (8, 256),
            (8, 512), (8, 1024), (8, 2048))


def equal_groups(n, k):
    """G groups of R rows each, every group full: the rows-per-group effect alone."""
    for g, r in EQUAL_GR:
        if time.time() > DEADLINE:
            return
        rows = g * r
        offs = torch.arange(1, g + 1, device=mk.dev, dtype=torch.int32) * r
        a8 = torch.randn(rows, k, device=mk.dev).to(torch.float8_e4m3fn)
        b8 = torch.randn(g, n, k, device=mk.dev).to(torch.float8_e4m3fn).transpose(-2, -1)
        sa = torch.ones(rows, device=mk.dev, dtype=torch.float32)
        sb = torch.ones(g, n, device=mk.dev, dtype=torch.float32)
        for fast in (False, True):
            sec = mk.time_fn(lambda: torch._scaled_grouped_mm(
                a8, b8, sa, sb, offs=offs, out_dtype=torch.bfloat16, use_fast_accum=fast))
            add("MoE equal groups fp8" + (" fastaccum" if fast else ""),
                f"groups {g} x rows {r} n x k = {n}x{k}", 2.0 * rows * n * k / sec / 1e12,
                "TFLOPS", f"{sec * 1e6:.2f} us per call")
        del a8, b8
        torch.cuda.empty_cache()
    # The same total rows as one dense GEMM against one weight, tensor-wise (cuBLASLt, what the
    # dense fit prices) and rowwise (CUTLASS) scales: this session's dense level at each size.
    for rows in sorted({g * r for g, r in EQUAL_GR}):
        if time.time() > DEADLINE:
            return
        mk.guard(mk.gemm, "fp8", rows, n, k, "equal-groups-dense-ref")
        mk.guard(dense_fp8, rows, n, k, "equal-groups-dense-ref")
        mk.guard(dense_fp8, rows, n, k, "equal-groups-dense-ref", True, True)
        mk.guard(dense_fp8, rows, n, k, "equal-groups-dense-ref", False, True)


def routing(tokens):
    logits = torch.randn(tokens, E, device=mk.dev, dtype=torch.float32)
    x = torch.randn(tokens, H, device=mk.dev, dtype=torch.bfloat16)
    w, ids = torch.softmax(logits, -1).topk(TOPK, dim=1)
    flat = ids.flatten()
    order = flat.argsort()
    src = order // TOPK
    y = torch.randn(tokens * TOPK, H, device=mk.dev, dtype=torch.bfloat16)
    out = torch.zeros(tokens, H, device=mk.dev, dtype=torch.bfloat16)
    wf = w.flatten()[order].to(torch.bfloat16).unsqueeze(1)
    cases = {
        "topk softmax": lambda: torch.softmax(logits, -1).topk(TOPK, dim=1),
        "sort expert ids": lambda: flat.argsort(),
        "permute rows": lambda: x.index_select(0, src),
        "unpermute weighted": lambda: out.index_add_(0, src, y * wf),
    }
    for name, fn in cases.items():
        sec = mk.time_fn(fn)
        add(f"MoE routing {name}", f"T {tokens}", sec * 1e6, "us per call")


DEADLINE = time.time() + float(os.environ.get("MAX_S", "300"))


def main():
    out_csv = sys.argv[1]
    torch.backends.cuda.matmul.allow_tf32 = False
    for n, k in EQUAL_NK:
        mk.guard(equal_groups, n, k)
        mk.write_rows(out_csv)
    if os.environ.get("EQUAL_ONLY"):  # the equal-groups sweep and its dense references alone
        return
    for tokens in TOKENS:
        if time.time() > DEADLINE:
            print(f"MAX_S reached: skipping T >= {tokens}", flush=True)
            break
        mk.guard(grouped, tokens, 2 * F, H, "gate_up")
        mk.guard(grouped, tokens, H, F, "down")
        mk.guard(routing, tokens)
        mk.write_rows(out_csv)  # keep what is done if a later case runs out of time


if __name__ == "__main__":
    main()
