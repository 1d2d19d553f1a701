#!/usr/bin/env python3
"""The Megatron-LM README's 1.7B GPT (24 x 2048, 16 heads of 128, ffn 8192, vocab 131072, seq
4096) forward + backward on one lent GPU, BF16, at micro-batches 1, 2 and 4.

Run on the device machine (PyTorch there); not part of the build or tests.
    python3 scripts/device/measure_gptstep.py OUT.csv
The model is written the way Megatron-Core's GPT layer computes (pre-LayerNorm with bias, fused
QKV with bias, causal SDPA (cuDNN's kernel in PyTorch 2.11 on sm90), output projection, tanh GELU
MLP with biases, untied LM head, the loss on fp32 logits) in plain PyTorch: no Transformer Engine,
no fusions beyond PyTorch's own kernels. Per micro-batch it times, with CUDA events (median of 5
after 3 warm-ups): the whole forward + loss + backward, the forward + loss alone, and one layer's
forward + backward; and the same layer's four GEMMs in the three layouts at that token count.
Parameters are BF16 and gradients accumulate in BF16 (set to None before each step).
Written 2026-11-27 night for the weak-scaling 1.7B row (VALIDATION.md, Training); not yet run:
the workplace stopped lending machines before it could. Check it on its first run.
"""
import csv
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import measure_kernels as mk  # noqa: E402
import torch  # noqa: E402

nn, F = torch.nn, torch.nn.functional
L, H, NH, HD, FFN, V, S = 24, 2048, 16, 128, 8192, 131072, 4096
rows = []


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(H), nn.LayerNorm(H)
        self.qkv, self.proj = nn.Linear(H, 3 * H), nn.Linear(H, H)
        self.fc1, self.fc2 = nn.Linear(H, FFN), nn.Linear(FFN, H)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, NH, HD).permute(2, 0, 3, 1, 4)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(o.transpose(1, 2).reshape(b, s, H))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb, self.pos = nn.Embedding(V, H), nn.Embedding(S, H)
        self.layers = nn.ModuleList([Block() for _ in range(L)])
        self.lnf = nn.LayerNorm(H)
        self.head = nn.Linear(H, V, bias=False)

    def forward(self, tok):
        x = self.emb(tok) + self.pos.weight[: tok.shape[1]]
        for blk in self.layers:
            x = blk(x)
        return self.head(self.lnf(x))


def events_median(fn, n=5):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    out = []
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(n):
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        out.append(s.elapsed_time(e) / 1e3)
    return statistics.median(out)


def add(what, mbs, sec, flop, note=""):
    rows.append([mk.SYSTEM, what, mbs, f"{sec * 1e3:.3f}", f"{flop / sec / 1e12:.1f}" if flop else "", note])
    print(f"{what:44s} mbs {mbs}  {sec * 1e3:9.3f} ms  {flop / sec / 1e12 if flop else 0:7.1f} TFLOP/s {note}", flush=True)


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device("cuda"):
        model = Gpt()
    torch.set_default_dtype(torch.float32)
    params = list(model.parameters())
    for mbs in (1, 2, 4):
        tok = torch.randint(0, V, (mbs, S), device="cuda")
        lab = torch.randint(0, V, (mbs, S), device="cuda")
        T = mbs * S
        # Megatron-LM r0.8.0 num_floating_point_operations for one micro-batch (fwd + bwd = 3x):
        # 24 B s L h^2 (1 + s / (6 h) + V / (16 L h)) x (ffn 4h, no GQA) / ... as the README counts
        flop = 72.0 * mbs * S * L * H * H * (1 + S / (6.0 * H) + V / (12.0 * L * H))

        def step():
            for p in params:
                p.grad = None
            logits = model(tok)
            F.cross_entropy(logits.flatten(0, 1).float(), lab.flatten()).backward()

        def fwd():
            with torch.no_grad():
                logits = model(tok)
                F.cross_entropy(logits.flatten(0, 1).float(), lab.flatten())
        try:
            add("step fwd+loss+bwd (24 layers + head)", mbs, events_median(step), flop, "Megatron FLOP count")
            add("forward + loss (no grad)", mbs, events_median(fwd), flop / 3)
        except torch.OutOfMemoryError:
            print(f"mbs {mbs}: out of memory", flush=True)
            torch.cuda.empty_cache()
            continue
        blk = model.layers[0]
        x = torch.randn(mbs, S, H, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        g = torch.randn(mbs, S, H, device="cuda", dtype=torch.bfloat16)
        lp = list(blk.parameters()) + [x]

        def layer_fb():
            for p in lp:
                p.grad = None
            blk(x).backward(g)
        lflop = 3 * (2.0 * T * H * (3 * H + H + 2 * FFN)) + 3.5 * 4.0 * mbs * S * S / 2 * NH * HD
        add("one layer fwd+bwd", mbs, events_median(layer_fb), lflop, "GEMMs 3x, causal attention 3.5x fwd")
        with torch.no_grad():
            add("one layer fwd", mbs, events_median(lambda: blk(x)),
                2.0 * T * H * (3 * H + H + 2 * FFN) + 4.0 * mbs * S * S / 2 * NH * HD)
        for name, n, k in (("qkv", 3 * H, H), ("proj", H, H), ("fc1", FFN, H), ("fc2", H, FFN)):
            for layout, (m_, n_, k_) in (("fprop", (T, n, k)), ("dgrad", (T, k, n)), ("wgrad", (n, k, T))):
                a = torch.randn(m_, k_, device="cuda", dtype=torch.bfloat16)
                b = torch.randn(n_, k_, device="cuda", dtype=torch.bfloat16)
                sec = mk.time_fn(lambda: a @ b.t())
                add(f"GEMM {name} {layout} {m_}x{n_}x{k_}", mbs, sec, 2.0 * m_ * n_ * k_)
                del a, b
        del x, g, tok, lab
        torch.cuda.empty_cache()
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["system", "what", "mbs", "ms", "TFLOP_per_s", "note"])
        w.writerows(rows)


if __name__ == "__main__":
    main()
