#!/usr/bin/env python3
"""Measure GPU kernels on one lent GPU (H100/H200) for ndtwin's calibration.

Run on the device machine (PyTorch there); not part of the build or tests.
Writes CSV rows (system,benchmark,parameter,value,unit,source,note) to argv[1]
and a clock/power trace to argv[2]. Timings use CUDA events; each case runs
until at least MIN_TIME seconds of timed work after warm-up, and the median of
REPEATS such timings is kept. Inputs are random (normal) data: zeros run faster
and draw less power.
"""
import csv
import os
import statistics
import subprocess
import sys
import time

import torch

MIN_TIME = float(os.environ.get("MIN_TIME", "0.12"))
REPEATS = 3
dev = torch.device("cuda")
props = torch.cuda.get_device_properties(0)
SYSTEM = f"{props.name} ({props.multi_processor_count} SMs), torch {torch.__version__}"
SOURCE = "ndtwin device run scripts/device/measure_kernels.py"
rows = []


def add(bench, param, value, unit, note=""):
    rows.append([SYSTEM, bench, param, f"{value:.6g}", unit, SOURCE, note])
    print(f"{bench:32s} {param:44s} {value:12.4g} {unit}", flush=True)


def time_fn(fn):
    """Seconds per call: median over REPEATS of a timed loop of >= MIN_TIME."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    torch.cuda.synchronize()
    one = max(s.elapsed_time(e) / 1e3, 1e-6)
    n = max(1, min(2000, int(MIN_TIME / one)))
    out = []
    for _ in range(REPEATS):
        s.record()
        for _ in range(n):
            fn()
        e.record()
        torch.cuda.synchronize()
        out.append(s.elapsed_time(e) / 1e3 / n)
    return statistics.median(out)


def gemm(dtype, m, n, k, label):
    if dtype == "fp8":
        a = torch.randn(m, k, device=dev).to(torch.float8_e4m3fn)
        w = torch.randn(n, k, device=dev).to(torch.float8_e4m3fn)
        one = torch.ones((), device=dev, dtype=torch.float32)
        b = w.t()

        def fn():
            torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    else:
        t = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp64": torch.float64,
             "fp32": torch.float32}[dtype]
        a = torch.randn(m, k, device=dev, dtype=t)
        b = torch.randn(k, n, device=dev, dtype=t)
        c = torch.empty(m, n, device=dev, dtype=t)

        def fn():
            torch.matmul(a, b, out=c)
    sec = time_fn(fn)
    add(f"GEMM {dtype} {label}", f"m x n x k = {m}x{n}x{k}", 2.0 * m * n * k / sec / 1e12,
        "TFLOPS", f"{sec * 1e6:.2f} us per call")
    del a, b
    torch.cuda.empty_cache()


def stream():
    nbytes = 2 << 30
    n = nbytes // 4
    a = torch.randn(n, device=dev)
    b = torch.randn(n, device=dev)
    c = torch.empty(n, device=dev)
    sec = time_fn(lambda: c.copy_(a))
    add("HBM STREAM (torch)", "Copy 2 GiB fp32", 2 * nbytes / sec / 1e12, "TB/s",
        "bytes read + written")
    sec = time_fn(lambda: torch.add(a, b, alpha=3.0, out=c))
    add("HBM STREAM (torch)", "Triad 2 GiB fp32", 3 * nbytes / sec / 1e12, "TB/s",
        "c = a + 3 b; bytes read + written")
    sec = time_fn(lambda: a.sum())
    add("HBM STREAM (torch)", "Read (sum) 2 GiB fp32", nbytes / sec / 1e12, "TB/s", "")
    del a, b, c
    torch.cuda.empty_cache()


def launches():
    x = torch.zeros(1, device=dev)
    N = 2000
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(N):
        x.add_(1.0)
    torch.cuda.synchronize()
    add("kernel launch (torch eager)", "1-element add_, back to back",
        (time.perf_counter() - t0) / N * 1e6, "us per kernel", "host-bound issue rate")
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            x.add_(1.0)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for _ in range(N):
            x.add_(1.0)
    sec = time_fn(g.replay)
    add("kernel launch (CUDA graph)", f"{N} 1-element add_ in one graph", sec / N * 1e6,
        "us per kernel", "device-side gap between dependent tiny kernels")


def attention():
    import torch.nn.functional as F
    # prefill: causal, Llama-70B-like heads (64 q heads, 8 kv heads, d 128)
    for s_len in (2048, 8192):
        q = torch.randn(1, 64, s_len, 128, device=dev, dtype=torch.bfloat16)
        kv = torch.randn(1, 64, s_len, 128, device=dev, dtype=torch.bfloat16)
        sec = time_fn(lambda: F.scaled_dot_product_attention(q, kv, kv, is_causal=True))
        flops = 4.0 * 64 * s_len * s_len * 128 / 2  # causal: half of QK^T and PV
        add("attention fwd (torch SDPA, causal)", f"b1 h64 d128 seq {s_len}",
            flops / sec / 1e12, "TFLOPS", "causal FLOPs counted (half the square)")
    # decode: one query token per sequence, GQA 64/8, bf16 KV
    for batch, ctx in ((16, 4096), (64, 4096), (64, 16384)):
        q = torch.randn(batch, 64, 1, 128, device=dev, dtype=torch.bfloat16)
        k = torch.randn(batch, 8, ctx, 128, device=dev, dtype=torch.bfloat16)
        v = torch.randn(batch, 8, ctx, 128, device=dev, dtype=torch.bfloat16)
        try:
            sec = time_fn(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True))
        except Exception as ex:  # noqa: BLE001 (record, go on)
            print("decode attention failed:", ex, flush=True)
            continue
        kv_bytes = 2.0 * batch * 8 * ctx * 128 * 2
        add("attention decode (torch SDPA, GQA 64/8)", f"batch {batch} ctx {ctx} d128",
            kv_bytes / sec / 1e12, "TB/s", f"K+V bytes read per call / time; {sec * 1e6:.1f} us")
        del q, k, v
    torch.cuda.empty_cache()


def attention_train():
    """Causal SDPA forward and backward at training shapes (bf16, d 128, 16k tokens per call).

    FLOPs as FlashAttention's benchmark counts them: forward 4 b h s^2 d / 2 (causal), backward
    2.5 x forward (the recomputed QK^T plus four GEMMs)."""
    import torch.nn.functional as F
    for s_len in (2048, 4096, 8192):
        b = 16384 // s_len
        h = 32
        q = torch.randn(b, h, s_len, 128, device=dev, dtype=torch.bfloat16, requires_grad=True)
        k = torch.randn(b, h, s_len, 128, device=dev, dtype=torch.bfloat16, requires_grad=True)
        v = torch.randn(b, h, s_len, 128, device=dev, dtype=torch.bfloat16, requires_grad=True)
        fwd_flops = 4.0 * b * h * s_len * s_len * 128 / 2
        with torch.no_grad():
            t_f = time_fn(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        g = torch.randn_like(out)

        def fb():
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            o.backward(g)
        t_fb = time_fn(fb)
        t_b = max(t_fb - t_f, 1e-9)
        add("attention train fwd (torch SDPA, causal)", f"b{b} h{h} d128 seq {s_len}",
            fwd_flops / t_f / 1e12, "TFLOPS", f"{t_f * 1e6:.1f} us")
        add("attention train bwd (torch SDPA, causal)", f"b{b} h{h} d128 seq {s_len}",
            2.5 * fwd_flops / t_b / 1e12, "TFLOPS",
            f"(fwd+bwd {t_fb * 1e6:.1f} us) - fwd; 2.5 x forward FLOPs")
        del q, k, v, out, g
    torch.cuda.empty_cache()


def sustained(dtype, seconds, trace_rows):
    """Run one big GEMM back to back for `seconds`, sampling clocks and power."""
    m = 8192
    if dtype == "fp8":
        a = torch.randn(m, m, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(m, m, device=dev).to(torch.float8_e4m3fn).t()
        one = torch.ones((), device=dev, dtype=torch.float32)

        def fn():
            torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    else:
        t = {"bf16": torch.bfloat16, "fp64": torch.float64}[dtype]
        a = torch.randn(m, m, device=dev, dtype=t)
        b = torch.randn(m, m, device=dev, dtype=t)

        def fn():
            torch.matmul(a, b)
    q = ["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu",
         "--format=csv,noheader,nounits", "-lms", "500"]
    try:
        smi = subprocess.Popen(q, stdout=subprocess.PIPE, text=True)
    except Exception:  # noqa: BLE001
        smi = None
    t0 = time.time()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    rates = []
    reps = 50 if dtype == "fp64" else 200
    while time.time() - t0 < seconds:
        s.record()
        for _ in range(reps):
            fn()
        e.record()
        torch.cuda.synchronize()
        rates.append(reps * 2.0 * m ** 3 / (s.elapsed_time(e) / 1e3) / 1e12)
        trace_rows.append([dtype, f"{time.time() - t0:.2f}", f"{rates[-1]:.1f}", "gemm"])
    if smi is not None:
        smi.terminate()
        out, _ = smi.communicate(timeout=10)
        for line in out.splitlines():
            trace_rows.append([dtype, "", "", line.strip()])
    first = statistics.median(rates[:3])
    last = statistics.median(rates[-5:])
    add(f"GEMM {dtype} sustained", f"8192^3 back to back, first 3 samples", first, "TFLOPS", "")
    add(f"GEMM {dtype} sustained", f"8192^3 back to back, after {seconds:.0f} s", last, "TFLOPS",
        "clock and power trace in the trace file")
    del a, b
    torch.cuda.empty_cache()


def write_rows(path):
    """The measured rows as CSV (system,benchmark,parameter,value,unit,source,note)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["system", "benchmark", "parameter", "value", "unit", "source", "note"])
        w.writerows(rows)


def guard(fn, *args):
    """Run one case; a failure is printed and the run goes on."""
    try:
        fn(*args)
    except Exception as ex:  # noqa: BLE001
        print(f"FAILED {fn.__name__}{args}: {ex}", flush=True)
        torch.cuda.empty_cache()


def main():
    out_csv, out_trace = sys.argv[1], sys.argv[2]
    torch.backends.cuda.matmul.allow_tf32 = False
    t_start = time.time()
    trace = []
    try:
        guard(launches)
        guard(stream)
        # HPL's trailing update C(m x n) -= A(m x nb) B(nb x n), and square DGEMMs.
        for s in (2048, 4096, 8192, 16384):
            guard(gemm, "fp64", s, s, s, "square")
        for mn in (8192, 16384, 32768):
            for nb in (128, 256, 384, 512, 768, 1024):
                guard(gemm, "fp64", mn, mn, nb, "HPL update")
        # BF16 / FP8 square and LLM shapes (Llama 2 70B, TP1: QKV 8192->10240, O 8192->8192,
        # gate+up 8192->57344, down 28672->8192); decode rows m = batch.
        for s in (1024, 2048, 4096, 8192, 16384):
            guard(gemm, "bf16", s, s, s, "square")
        for dt in ("bf16", "fp8"):
            for (k, n) in ((8192, 10240), (8192, 8192), (8192, 57344), (28672, 8192)):
                for m in (16, 64, 256, 1024, 4096, 16384):
                    guard(gemm, dt, m, n, k, "LLM shape")
        for m in (1, 4):
            for (k, n) in ((8192, 10240), (28672, 8192)):
                guard(gemm, "bf16", m, n, k, "LLM shape")
        guard(attention)
        guard(attention_train)
        guard(sustained, "bf16", 20.0, trace)
        guard(sustained, "fp8", 15.0, trace)
        guard(sustained, "fp64", 15.0, trace)
    finally:
        write_rows(out_csv)
        with open(out_trace, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["dtype", "t_s", "tflops", "smi: timestamp, clocks_sm_mhz, clocks_mem_mhz, power_w, temp_c"])
            w.writerows(trace)
        print(f"done in {time.time() - t_start:.0f} s", flush=True)


if __name__ == "__main__":
    main()
