#!/usr/bin/env python3
"""Latency tails of the MLPerf serving calibration runs: predicted vs measured mean and p99.

Runs the Server / Interactive rows of ../shared/validation/calibration/serving.csv exactly as
src/serve/fit_serving.py runs them (MLPerf v5.0 B200 on its calibration-only DGX B200 stand-in,
v4.1 H100 TP2 and H200 TP1 on the catalog VMs; the stacks' engine traits) at the measured rate
(--qps), and prints mean TPOT, p99 TPOT, mean TTFT, p99 TTFT and the p99/mean ratios next to the
measured ones (a blank where the run did not publish one). With --search it also runs each row
without --qps (the highest Poisson rate whose p99s meet MLPerf's limits) and compares that rate
with the submitted one. Nothing is fitted here.

    python3 scripts/serving_tails.py [--search] [--bin build/ndtwin] [--data DIR]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src", "serve"))
import fit_serving as fs  # noqa: E402  (cases, stacks and the B200 stand-in, as fitted)


def measured(rows):
    """Measured ms per fit_serving case prefix: (mean TPOT, p99 TPOT, mean TTFT, p99 TTFT), read
    from serving.csv's value / conditions / note text (None where the run did not publish it)."""
    def row(metric, system=None):
        for r in rows:
            if r["metric"] == metric and (system is None or system in r["system"]):
                return r
        raise KeyError(metric)

    def num(text, pattern):
        m = re.search(pattern, text)
        return float(m.group(1).replace(",", "")) if m else None

    out = {}
    r = row("MLPerf v5.0 Llama2-70B Server mean TPOT", "DGX")
    t = row("MLPerf v5.0 Llama2-70B Server mean TTFT", "DGX")
    out["MLPerf v5.0 B200 Server"] = (float(r["value"]), num(r["conditions"], r"p99 ([0-9.]+)"),
                                      float(t["value"]),
                                      num(t["conditions"], r"p99 ([0-9,.]+) ms"))
    r = row("MLPerf v5.0 Llama2-70B-Interactive Server mean TPOT")
    out["MLPerf v5.0 B200 Interactive"] = (
        float(r["value"]), num(r["conditions"], r"p99 ([0-9.]+) ms"),
        num(r["conditions"], r"mean TTFT ([0-9.]+)"), num(r["conditions"], r"p99 TTFT ([0-9.]+)"))
    r = row("MLPerf v4.1 Llama2-70B Server mean TPOT")
    out["MLPerf v4.1 H100 TP2 Server"] = (
        float(r["value"]), num(r["conditions"], r"p99 ([0-9.]+) ms"),
        num(r["conditions"], r"mean TTFT ([0-9.]+)"), num(r["conditions"], r"\(p99 ([0-9.]+)\)"))
    r = row("MLPerf v4.1 Llama2-70B-99 Server tokens/s (8 GPUs)")
    out["MLPerf v4.1 H200 TP1 Server"] = (
        num(r["note"], r"mean TPOT ([0-9.]+)"), num(r["note"], r"p99 ([0-9.]+)"),
        num(r["note"], r"mean TTFT ([0-9.]+)"), None)
    return out


def infer(binary, data, args):
    p = subprocess.run([binary, "--hw-data", data, "infer", "--json"] + args,
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1]
    return json.loads(p.stdout), ""


def fmt(x, w=7):
    return ("%*.1f" % (w, x)) if x is not None else " " * (w - 1) + "-"


def fmt2(x):
    return "%6.2f" % x if x is not None else "     -"


def ratio(a, b):
    return a / b if a is not None and b else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "ndtwin"))
    ap.add_argument("--search", action="store_true", help="also search the rate (no --qps)")
    ap.add_argument("--data", default=os.path.join(ROOT, "data"),
                    help="data dir to run on (default: the repo's; e.g. a copy with other fits)")
    a = ap.parse_args()
    rows = list(fs.csv.DictReader(open(fs.CSV)))
    meas = measured(rows)
    tmp = tempfile.mkdtemp(prefix="ndt_tails_")
    data = os.path.join(tmp, "data")
    shutil.copytree(a.data, data)
    fs.b200_vm(data)
    try:
        seen = {}
        for name, _, args, metric, _, _ in fs.with_stacks(data, fs.cases(rows)):
            key = name.rsplit(" mean ", 1)[0]
            if metric != "tpot_mean" or key not in meas or key in seen:
                continue
            seen[key] = args
        print("%-30s %-5s %7s %7s %6s %7s %7s %6s" % ("case (ms)", "", "TPOTavg", "TPOTp99",
                                                     "p99/av", "TTFTavg", "TTFTp99", "p99/av"))
        for key, args in seen.items():
            j, err = infer(a.bin, data, args)
            if j is None:
                print("%-30s refused: %s" % (key, err))
                continue
            pred = (1e3 * j["tpot_s"]["mean"], 1e3 * j["tpot_s"]["p99"],
                    1e3 * j["ttft_s"]["mean"], 1e3 * j["ttft_s"]["p99"])
            for label, v in (("meas", meas[key]), ("pred", pred)):
                print("%-30s %-5s %s %s %s %s %s %s" % (
                    key if label == "meas" else "", label, fmt(v[0]), fmt(v[1]),
                    fmt2(ratio(v[1], v[0])), fmt(v[2]), fmt(v[3]), fmt2(ratio(v[3], v[2]))))
        if not a.search:
            return
        print("\n%-30s %10s %10s %7s %9s" % ("search (no --qps)", "found q/s", "measured", "ratio",
                                            "tok/s/GPU"))
        for key, args in seen.items():
            i = args.index("--qps")
            qps = float(args[i + 1])
            j, err = infer(a.bin, data, args[:i] + args[i + 2:])
            if j is None:
                print("%-30s refused: %s" % (key, err))
                continue
            print("%-30s %10.2f %10.2f %7.3f %9.0f" % (key, j["qps"], qps, j["qps"] / qps,
                                                      j["per_gpu_output_tokens_per_s"]))
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
