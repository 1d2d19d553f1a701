#!/usr/bin/env python3
"""Host cost of DeepSpeed 2021 ZeRO-3's per-rank Python loops, on the device machine's CPU.

Run on the device machine (PyTorch there); not part of the build or tests. Writes CSV rows
(system,benchmark,parameter,value,unit,source,note) to argv[1].

DeepSpeed 0.3.x partition_parameters._allgather_param builds, before each all-gather and after a
torch.cuda.synchronize(), the list of world-size views of the flat buffer in Python:
    for i in range(world_size):
        partitions.append(flat_tensor.narrow(0, partition_size * i, partition_size))
        if i == torch.distributed.get_rank(group=self.ds_process_group): partitions[i].copy_(...)
and _reduce_scatter_gradients builds a list of world-size narrow views per gradient. This times
those loops per rank (median of 5 runs of 20 loops), on a non-default process group as DeepSpeed's
(gloo, one process: get_rank(group) takes the same Python path as with NCCL). A modern CPU and
PyTorch, not 2021's: read as the order of magnitude of the per-rank host cost.
"""
import csv
import os
import platform
import statistics
import sys
import time

import torch
import torch.distributed as dist

os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("gloo", rank=0, world_size=1)
group = dist.new_group([0])
dev = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
SYSTEM = f"{platform.processor() or platform.machine()} host, python {platform.python_version()}, torch {torch.__version__}"
SOURCE = "ndtwin device run scripts/device/measure_zero3_host.py"
rows = []


def add(bench, param, value, unit, note=""):
    rows.append([SYSTEM, bench, param, f"{value:.6g}", unit, SOURCE, note])
    print(f"{bench:40s} {param:24s} {value:10.4g} {unit}", flush=True)


def per_rank_us(fn, ws):
    for _ in range(3):
        fn()
    runs = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(20):
            fn()
        runs.append((time.perf_counter() - t) / 20 / ws * 1e6)
    return statistics.median(runs)


try:
    with open("/proc/cpuinfo") as f:
        model = [l.split(":", 1)[1].strip() for l in f if l.startswith("model name")][:1]
    if model:
        SYSTEM = f"{model[0]}, python {platform.python_version()}, torch {torch.__version__}"
except OSError:
    pass

for ws in (384, 1536):
    ps = 1024
    flat = torch.zeros(ws * ps, dtype=torch.half, device=dev)

    def gather_loop():
        parts = []
        for i in range(ws):
            parts.append(flat.narrow(0, ps * i, ps))
            if i == dist.get_rank(group=group):
                pass
        return parts

    def narrow_loop():
        return [flat.narrow(0, ps * i, ps) for i in range(ws)]

    def get_rank_loop():
        r = 0
        for _ in range(ws):
            r += dist.get_rank(group=group)
        return r

    add("zero3 all-gather view loop", f"world {ws}", per_rank_us(gather_loop, ws),
        "us per rank", "narrow + append + get_rank(group) per rank (DeepSpeed 0.3.x _allgather_param)")
    add("zero3 narrow list", f"world {ws}", per_rank_us(narrow_loop, ws), "us per rank",
        "list comprehension of narrow views (reduce-scatter input list)")
    add("torch.distributed.get_rank(group)", f"world {ws}", per_rank_us(get_rank_loop, ws),
        "us per call", "non-default group")

with open(sys.argv[1], "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["system", "benchmark", "parameter", "value", "unit", "source", "note"])
    w.writerows(rows)
