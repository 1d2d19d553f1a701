#!/usr/bin/env python3
"""A Llama-3-8B-shaped training step on one lent GPU: memory reserve, fragmentation, kernel profile.

Run on the device machine (PyTorch there); not part of the build or tests.
    python3 scripts/device/measure_layerprof.py OUTDIR
runs four subprocesses and writes CSVs into OUTDIR:
  ctx (lazy, then eager module loading): device memory a process holds outside PyTorch's caching
      allocator after each first use (CUDA context, cuBLAS, cuBLASLt FP8, SDPA, a training step):
      NVML's used bytes minus the bytes before the process touched CUDA minus the allocator's
      reserved bytes.
  train (default allocator, then expandable_segments): LAYERS layers of Llama 3 8B (h 4096, 32/8
      heads of 128, ffn 14336, vocab 128256), seq 8192, micro-batch 1, BF16 parameters and AdamW
      (fused), written as torchtitan's 2024 model (eager RMSNorm and RoPE, materialised repeat_kv,
      SDPA, SwiGLU, the loss on fp32 logits): per-step time, the allocator's peak allocated and
      reserved bytes (fragmentation = 1 - allocated / reserved), and, for the default allocator,
      a torch.profiler kernel table of one step.
  ops: the step's operators one at a time at its shapes (8,192 tokens): seconds per call and
      the bytes or FLOPs they must move, for ndtwin's operator prices.
Timings use CUDA events (measure_kernels.time_fn: median of 3 loops of >= MIN_TIME s after
warm-up); inputs are random normal data.
"""
import csv
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
H, NH, NKV, HD, FFN, VOCAB, SEQ = 4096, 32, 8, 128, 14336, 128256, 8192


def nvml_used():
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        return pynvml.nvmlDeviceGetMemoryInfo(h).used
    except Exception:  # no NVML binding: nvidia-smi's MiB
        r = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                           capture_output=True, text=True)
        return int(r.stdout.split()[0]) * 2**20


def build_model(torch, layers):
    nn = torch.nn
    F = torch.nn.functional

    class RMSNorm(nn.Module):
        def __init__(self, dim, eps=1e-5):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(dim))

        def forward(self, x):
            xf = x.float()
            return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight

    def rope(xq, xk, fc):
        xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
        f = fc[: xq_.shape[1]].view(1, xq_.shape[1], 1, xq_.shape[-1])
        return (torch.view_as_real(xq_ * f).flatten(3).type_as(xq),
                torch.view_as_real(xk_ * f).flatten(3).type_as(xk))

    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.wq = nn.Linear(H, NH * HD, bias=False)
            self.wk = nn.Linear(H, NKV * HD, bias=False)
            self.wv = nn.Linear(H, NKV * HD, bias=False)
            self.wo = nn.Linear(NH * HD, H, bias=False)

        def forward(self, x, fc):
            b, t, _ = x.shape
            q = self.wq(x).view(b, t, NH, HD)
            k = self.wk(x).view(b, t, NKV, HD)
            v = self.wv(x).view(b, t, NKV, HD)
            q, k = rope(q, k, fc)
            r = NH // NKV
            k = k[:, :, :, None, :].expand(b, t, NKV, r, HD).reshape(b, t, NH, HD)
            v = v[:, :, :, None, :].expand(b, t, NKV, r, HD).reshape(b, t, NH, HD)
            o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2),
                                               v.transpose(1, 2), is_causal=True)
            return self.wo(o.transpose(1, 2).contiguous().view(b, t, -1))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = nn.Linear(H, FFN, bias=False)
            self.w2 = nn.Linear(FFN, H, bias=False)
            self.w3 = nn.Linear(H, FFN, bias=False)

        def forward(self, x):
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention_norm, self.ffn_norm = RMSNorm(H), RMSNorm(H)
            self.attention, self.feed_forward = Attn(), MLP()

        def forward(self, x, fc):
            h = x + self.attention(self.attention_norm(x), fc)
            return h + self.feed_forward(self.ffn_norm(h))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_embeddings = nn.Embedding(VOCAB, H)
            self.layers = nn.ModuleList([Block() for _ in range(layers)])
            self.norm = RMSNorm(H)
            self.output = nn.Linear(H, VOCAB, bias=False)
            freqs = 1.0 / (500000.0 ** (torch.arange(0, HD, 2)[: HD // 2].float() / HD))
            ang = torch.outer(torch.arange(SEQ).float(), freqs)
            self.register_buffer("fc", torch.polar(torch.ones_like(ang), ang), persistent=False)

        def forward(self, tokens):
            h = self.tok_embeddings(tokens)
            for layer in self.layers:
                h = layer(h, self.fc)
            return self.output(self.norm(h))

    return Model, Block, RMSNorm, rope


def emit(path, rows):
    with open(path, "a", newline="") as f:
        csv.writer(f).writerows(rows)
    for r in rows:
        print(",".join(str(x) for x in r), flush=True)


def run_ctx(out):
    base = nvml_used()
    import torch
    F = torch.nn.functional
    mode = os.environ.get("CUDA_MODULE_LOADING", "LAZY(default)")
    rows = []

    def mark(stage):
        torch.cuda.synchronize()
        used = nvml_used() - base
        res = torch.cuda.memory_reserved()
        rows.append(["ctx", mode, stage, used / 2**20, res / 2**20, (used - res) / 2**20])

    torch.cuda.init()
    x = torch.empty(1, device="cuda")
    mark("context (first allocation)")
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    (a @ a).sum().item()
    mark("+ bf16 matmul (cuBLAS handle, workspace)")
    a8 = a.to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda")
    torch._scaled_mm(a8, a8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    mark("+ fp8 _scaled_mm (cuBLASLt)")
    q = torch.randn(1, 32, 4096, 128, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    F.scaled_dot_product_attention(q, q, q, is_causal=True).sum().backward()
    mark("+ SDPA forward and backward")
    Model, _, _, _ = build_model(torch, 2)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        m = Model()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, fused=True)
    tok = torch.randint(0, VOCAB, (1, 2048), device="cuda")
    logits = m(tok)
    F.cross_entropy(logits.flatten(0, 1).float(), tok.flatten()).backward()
    opt.step()
    del x
    mark("+ a 2-layer training step (every kernel of the step)")
    emit(os.path.join(out, "memctx.csv"), rows)


def run_train(out):
    import torch
    F = torch.nn.functional
    layers = int(os.environ.get("LAYERS", "8"))
    alloc = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "default")
    base = nvml_used()
    torch.manual_seed(0)
    Model, _, _, _ = build_model(torch, layers)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        m = Model()
    torch.set_default_dtype(torch.float32)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    nparam = sum(p.numel() for p in m.parameters())
    opt = torch.optim.AdamW(m.parameters(), lr=1e-5, fused=True)
    tok = torch.randint(0, VOCAB, (1, SEQ), device="cuda")
    lab = torch.randint(0, VOCAB, (1, SEQ), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        logits = m(tok)
        loss = F.cross_entropy(logits.flatten(0, 1).float(), lab.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0, foreach=True)
        opt.step()

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    times, walls = [], []
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(8):
        w0 = time.perf_counter()
        s.record()
        step()
        e.record()
        torch.cuda.synchronize()
        walls.append(time.perf_counter() - w0)
        times.append(s.elapsed_time(e) / 1e3)
    times.sort()
    walls.sort()
    st = torch.cuda.memory_stats()
    peak_a, peak_r = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
    used = nvml_used() - base
    tag = f"train {layers}L seq {SEQ} mbs 1 bf16, alloc {alloc}"
    rows = [
        [tag, "parameters", nparam, "count", ""],
        [tag, "step time median", times[len(times) // 2], "s", f"min {times[0]:.4f} max {times[-1]:.4f}; wall median {walls[len(walls) // 2]:.4f}"],
        [tag, "peak allocated", peak_a / 2**30, "GiB", ""],
        [tag, "peak reserved", peak_r / 2**30, "GiB", ""],
        [tag, "fragmentation 1 - allocated/reserved", 1 - peak_a / peak_r, "ratio", "at the peaks"],
        [tag, "reserved now", torch.cuda.memory_reserved() / 2**30, "GiB", ""],
        [tag, "inactive split peak", st.get("inactive_split_bytes.all.peak", 0) / 2**30, "GiB", ""],
        [tag, "alloc retries", st.get("num_alloc_retries", 0), "count", ""],
        [tag, "nvml used - reserved now", (used - torch.cuda.memory_reserved()) / 2**30, "GiB", "outside the allocator"],
    ]
    emit(os.path.join(out, "train.csv"), rows)
    if os.environ.get("PROFILE") != "1":
        return
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        s.record()
        step()
        e.record()
        torch.cuda.synchronize()
    wall = s.elapsed_time(e) / 1e3
    krows, total = [], 0.0
    for ev in prof.key_averages():
        t = getattr(ev, "self_device_time_total", None)
        if t is None:
            t = getattr(ev, "self_cuda_time_total", 0.0)
        if t <= 0:
            continue
        total += t
        krows.append([ev.key[:200], ev.count, t])
    krows.sort(key=lambda r: -r[2])
    with open(os.path.join(out, "kernels.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kernel", "calls", "device_us", "step_s", f"{wall:.6f}"])
        w.writerows(krows)
    emit(os.path.join(out, "train.csv"),
         [[tag, "profiled step: kernel time sum", total / 1e6, "s", f"profiled step {wall:.4f} s (events)"]])


def run_ops(out):
    sys.path.insert(0, HERE)
    import measure_kernels as mk
    import torch
    F = torch.nn.functional
    dev = "cuda"
    bf = torch.bfloat16
    T = SEQ
    rows = []
    _, Block, RMSNorm, rope = build_model(torch, 1)

    def rec(name, fn, nbytes=0.0, flop=0.0, note=""):
        sec = mk.time_fn(fn)
        rows.append(["op", name, sec * 1e6, "us", nbytes / sec / 1e9 if nbytes else "",
                     flop / sec / 1e12 if flop else "", note])
        print(f"{name:60s} {sec * 1e6:10.1f} us", flush=True)
        torch.cuda.empty_cache()

    def fb(f, *xs, params=()):
        # forward then backward with a random output gradient; the leaves' .grad reset first so
        # the backward writes them (no accumulation kernel, as in a step's first micro-batch)
        leaves = list(xs) + list(params)

        def fn():
            for t in leaves:
                t.grad = None
            y = f(*xs)
            y.backward(g[y.shape])
        return fn

    g = {}

    def grad_for(shape, dtype=bf):
        g[torch.Size(shape)] = torch.randn(*shape, device=dev, dtype=dtype)

    x = torch.randn(T, H, device=dev, dtype=bf, requires_grad=True)
    grad_for((T, H))
    norm = RMSNorm(H).to(dev, bf)
    rec("rmsnorm eager fwd [8192,4096]", lambda: norm(x), 2 * T * H * 2)
    rec("rmsnorm eager fwd+bwd", fb(norm, x, params=norm.parameters()), 5 * T * H * 2)
    w = torch.ones(H, device=dev, dtype=bf, requires_grad=True)
    rec("F.rms_norm fwd", lambda: F.rms_norm(x, (H,), w), 2 * T * H * 2)
    rec("F.rms_norm fwd+bwd", fb(lambda a: F.rms_norm(a, (H,), w), x, params=[w]), 5 * T * H * 2)
    rec("residual add fwd [8192,4096]", lambda: x + x, 3 * T * H * 2)

    fc = torch.polar(torch.ones(T, HD // 2, device=dev), torch.randn(T, HD // 2, device=dev))
    q = torch.randn(1, T, NH, HD, device=dev, dtype=bf, requires_grad=True)
    k = torch.randn(1, T, NKV, HD, device=dev, dtype=bf, requires_grad=True)
    grad_for((1, T, NH, HD))
    gk = torch.randn_like(k)

    def rope_fb():
        q.grad, k.grad = None, None
        torch.autograd.backward(rope(q, k, fc), (g[q.shape], gk))
    qk_bytes = (NH + NKV) * T * HD * 2 * 2
    rec("rope eager fwd q[8192,32,128] k[8192,8,128]", lambda: rope(q, k, fc), qk_bytes)
    rec("rope eager fwd+bwd (q and k)", rope_fb, 2 * qk_bytes)
    rec("repeat_kv materialise k 8->32 heads", lambda: k[:, :, :, None, :].expand(1, T, NKV, 4, HD).reshape(1, T, NH, HD), (NKV + NH) * T * HD * 2)
    o = torch.randn(1, NH, T, HD, device=dev, dtype=bf)
    rec("attention output transpose+contiguous", lambda: o.transpose(1, 2).contiguous(), 2 * NH * T * HD * 2)

    a = torch.randn(T, FFN, device=dev, dtype=bf, requires_grad=True)
    b = torch.randn(T, FFN, device=dev, dtype=bf, requires_grad=True)
    grad_for((T, FFN))
    rec("swiglu eager fwd silu(a)*b [8192,14336]", lambda: F.silu(a) * b, 4 * T * FFN * 2, note="two kernels: silu writes, mul reads")
    rec("swiglu eager fwd+bwd", fb(lambda u, v: F.silu(u) * v, a, b), 4 * T * FFN * 2 * 3)
    del a, b

    xh = torch.randn(T, H, device=dev, dtype=bf)
    wo = torch.randn(VOCAB, H, device=dev, dtype=bf)
    rec("LM head GEMM fwd 8192x128256x4096", lambda: xh @ wo.t(), flop=2.0 * T * VOCAB * H)
    del wo
    torch.cuda.empty_cache()
    logits = torch.randn(T, VOCAB, device=dev, dtype=bf, requires_grad=True)
    lab = torch.randint(0, VOCAB, (T,), device=dev)
    lb = T * VOCAB

    def ce():
        logits.grad = None
        F.cross_entropy(logits.float(), lab).backward()
    rec("loss: .float() + cross_entropy fwd+bwd [8192,128256]", ce, lb * (2 + 4 + 4 + 4 + 4 + 2))
    del logits
    torch.cuda.empty_cache()

    x8 = torch.randn(T, H, device=dev, dtype=bf)
    rec("fp8 cast (torch) [8192,4096]", lambda: x8.to(torch.float8_e4m3fn), 3 * T * H)
    rec("fp8 cast + transpose (torch, two kernels)", lambda: (x8.to(torch.float8_e4m3fn), x8.t().contiguous().to(torch.float8_e4m3fn)), 3 * T * H * 2)
    rec("amax (torch) [8192,4096]", lambda: x8.abs().amax(), 2 * T * H)

    # optimizer: fused AdamW over one 8B-layer's worth of parameters, bf16 and fp32
    for dt, nb in ((bf, 2), (torch.float32, 4)):
        shapes = [(NH * HD, H), (NKV * HD, H), (NKV * HD, H), (H, NH * HD), (FFN, H), (H, FFN), (FFN, H), (H,), (H,)]
        ps = [torch.randn(*s_, device=dev, dtype=dt, requires_grad=True) for s_ in shapes]
        for p in ps:
            p.grad = torch.randn_like(p)
        n = sum(p.numel() for p in ps)
        o_ = torch.optim.AdamW(ps, lr=1e-5, fused=True)
        o_.step()
        rec(f"AdamW fused step, one layer ({n} params, {dt})", o_.step, n * nb * 7, note="bytes: read p,g,m,v, write p,m,v")
        rec(f"clip_grad_norm_ foreach, one layer ({dt})", lambda: torch.nn.utils.clip_grad_norm_(ps, 1.0, foreach=True), n * nb * 3)
        del ps, o_
        torch.cuda.empty_cache()

    # one whole layer at 8,192 tokens, and its GEMMs alone
    blk = Block().to(dev, bf)
    xl = torch.randn(1, T, H, device=dev, dtype=bf, requires_grad=True)
    grad_for((1, T, H))
    fcl = torch.polar(torch.ones(T, HD // 2, device=dev), torch.randn(T, HD // 2, device=dev))
    lf = 2.0 * T * H * (NH * HD + 2 * NKV * HD + NH * HD) + 2.0 * T * 3 * H * FFN
    af = 4.0 * T * T / 2 * NH * HD
    rec("layer fwd (8B, 8192 tokens)", lambda: blk(xl, fcl), flop=lf + af)
    rec("layer fwd+bwd (8B, 8192 tokens)", fb(lambda t: blk(t, fcl), xl, params=blk.parameters()), flop=3 * lf + 3.5 * af)
    w_all = [torch.randn(n_, k_, device=dev, dtype=bf) for n_, k_ in ((NH * HD + 2 * NKV * HD, H), (H, NH * HD), (2 * FFN, H), (H, FFN))]
    xs = [torch.randn(T, k_, device=dev, dtype=bf) for _, k_ in ((0, H), (0, NH * HD), (0, H), (0, FFN))]
    rec("layer GEMMs fwd only (fused qkv, o, gate+up, down)", lambda: [xx @ ww.t() for xx, ww in zip(xs, w_all)], flop=lf)
    qa = torch.randn(1, NH, T, HD, device=dev, dtype=bf, requires_grad=True)
    grad_for((1, NH, T, HD))
    rec("SDPA causal fwd 32x128, 8192", lambda: F.scaled_dot_product_attention(qa, qa, qa, is_causal=True), flop=af)
    rec("SDPA causal fwd+bwd", fb(lambda t: F.scaled_dot_product_attention(t, t, t, is_causal=True), qa), flop=3.5 * af)
    with open(os.path.join(out, "ops.csv"), "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(["kind", "op", "time", "unit", "GB_per_s", "TFLOP_per_s", "note"])
        wr.writerows(rows)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    if len(sys.argv) > 2:
        {"ctx": run_ctx, "train": run_train, "ops": run_ops}[sys.argv[2]](out)
        return
    me = os.path.abspath(__file__)
    env0 = dict(os.environ)
    env0.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    env0.pop("CUDA_MODULE_LOADING", None)
    runs = [
        ("ctx", {}),
        ("ctx", {"CUDA_MODULE_LOADING": "EAGER"}),
        ("train", {"PROFILE": "1"}),
        ("train", {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}),
        ("ops", {}),
    ]
    for mode, extra in runs:
        t0 = time.time()
        env = dict(env0, **extra)
        r = subprocess.run([sys.executable, me, out, mode], env=env)
        print(f"== {mode} {json.dumps(extra)} rc {r.returncode} in {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
