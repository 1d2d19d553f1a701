"""Result.plot(): one matplotlib Figure per kind of result, drawn from the --json document.

Figures are made without pyplot (matplotlib.figure.Figure), so plotting is safe from threads and
leaves no global state; in a notebook, ``%matplotlib inline`` displays a returned Figure.
"""


_GIB = 1024.0**3


def _figure(ncols, width=5.0, height=3.8):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols, height), layout="constrained")
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def _kind(result):
    schema = result.schema or ""
    return schema.split("/")[0].replace("ndtwin.", "") if schema else result.command


def plot(result, **kwargs):
    kind = _kind(result)
    if kind == "fleet":
        return _fleet(result.to_dict(), result=result, **kwargs)
    return _PLOTS.get(kind, _generic)(result.to_dict(), **kwargs)


def _title(fig, text):
    fig.suptitle(text, fontsize=11)


# ---- train: where the step time goes, and what fills a GPU's memory ----
def _train(doc, **_):
    fig, (ax_t, ax_m) = _figure(2)
    parts = [(k[:-2].replace("_", " "), v) for k, v in doc["breakdown"].items()
             if k.endswith("_s") and isinstance(v, (int, float))]
    labels = [p[0] for p in parts]
    values = [p[1] for p in parts]
    ax_t.barh(labels, values, color="tab:blue")
    ax_t.invert_yaxis()
    ax_t.axvline(doc["step_time_s"], color="k", ls="--", lw=1,
                 label="step %.3g s" % doc["step_time_s"])
    ax_t.set_xlabel("seconds per step (sum > step: overlap)")
    ax_t.set_title("Time breakdown")
    ax_t.legend(loc="lower right", fontsize=8)

    mem = doc["memory"]
    stack = [(k[:-6].replace("_", " "), v / _GIB) for k, v in mem.items()
             if k.endswith("_bytes") and k not in ("capacity_bytes", "usable_bytes")
             and isinstance(v, (int, float))]
    bottom = 0.0
    for name, gib in stack:
        ax_m.bar(["pipeline stage %s" % mem.get("peak_stage", "")], [gib], bottom=bottom,
                 label=name)
        bottom += gib
    # The bars (model state, activations, pipeline buffers) must stay under the capacity less
    # the reserve (CUDA context, cuBLAS, NCCL, userbuffers, fragmentation: memory.reserve).
    line = mem.get("usable_bytes", mem["capacity_bytes"])
    ax_m.axhline(line / _GIB, color="r", ls="--", lw=1,
                 label="usable %.0f of %.0f GiB" % (line / _GIB, mem["capacity_bytes"] / _GIB))
    ax_m.set_ylabel("GiB per GPU (peak stage)")
    ax_m.set_title("Memory (peak %.1f GiB)" % (mem["peak_bytes_per_gpu"] / _GIB))
    ax_m.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    s = doc.get("strategy", {})
    _title(fig, "train %s on %s x%s: tp%s pp%s dp%s, MFU %.1f%%" % (
        doc.get("model"), doc.get("sku"), doc.get("vms"), s.get("tp"), s.get("pp"), s.get("dp"),
        100 * doc.get("mfu", 0.0)))
    return fig


# ---- collective: bus bandwidth and latency against the message size ----
def _collective(doc, **_):
    rows = doc["rows"]
    fig, (ax_b, ax_l) = _figure(2)
    x = [r["bytes"] for r in rows]
    lo = [r.get("busbw_GBps_interval", {}).get("p10") for r in rows]
    hi = [r.get("busbw_GBps_interval", {}).get("p90") for r in rows]
    ax_b.plot(x, [r["busbw_GBps"] for r in rows], color="0.6", lw=1, zorder=1)
    if all(v is not None for v in lo + hi):
        ax_b.fill_between(x, lo, hi, color="tab:blue", alpha=0.15, label="p10-p90 interval")
    ax_l.plot(x, [r["time_us"] for r in rows], color="0.6", lw=1, zorder=1)
    algos = []
    for r in rows:
        a = "%s/%s" % (r.get("algorithm"), r.get("protocol"))
        if a not in algos:
            algos.append(a)
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown"]
    for i, a in enumerate(algos):
        sel = [r for r in rows if "%s/%s" % (r.get("algorithm"), r.get("protocol")) == a]
        c = colors[i % len(colors)]
        ax_b.scatter([r["bytes"] for r in sel], [r["busbw_GBps"] for r in sel], color=c,
                     label=a, zorder=2, s=18)
        ax_l.scatter([r["bytes"] for r in sel], [r["time_us"] for r in sel], color=c, label=a,
                     zorder=2, s=18)
    for ax in (ax_b, ax_l):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (bytes)")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
    ax_l.set_yscale("log")
    ax_b.set_ylabel("bus bandwidth (GB/s)")
    ax_l.set_ylabel("time (us)")
    ax_b.set_title("Bus bandwidth")
    ax_l.set_title("Latency")
    _title(fig, "%s on %s x%s (%s GPUs), NCCL %s" % (doc.get("op"), doc.get("sku"),
                                                    doc.get("vms"), doc.get("gpus"),
                                                    doc.get("nccl_version")))
    return fig


def _interval(ax, x, lo, hi, label):
    """A prediction interval (p10..p90 of measured/predicted over its class, applied to this
    prediction) as a red bar beside bar x; it need not contain the prediction."""
    ax.plot([x + 0.3, x + 0.3], [lo, hi], color="r", lw=2, marker="_", ms=10, label=label)


# ---- infer: latency distributions and throughput ----
def _infer(doc, **_):
    metrics = [(k, doc[k]) for k in ("ttft_s", "tpot_s", "e2e_s") if isinstance(doc.get(k), dict)]
    fig, axes = _figure(len(metrics) + 1, width=3.6)
    stats = ("p50", "p90", "p99", "max")
    for ax, (name, d) in zip(axes, metrics):
        vals = [d.get(s) for s in stats]
        ax.bar(stats, [v * 1e3 if v is not None else 0 for v in vals], color="tab:blue")
        if "mean" in d:
            ax.axhline(d["mean"] * 1e3, color="k", ls="--", lw=1, label="mean")
        iv = d.get("p99_interval")
        if iv and iv.get("p10") is not None:
            _interval(ax, 2, iv["p10"] * 1e3, iv["p90"] * 1e3, "p99 interval")
        ax.set_title(name[:-2].upper())
        ax.set_ylabel("ms")
        ax.legend(fontsize=7)
    ax = axes[-1]
    tput = doc.get("output_tokens_per_s", 0.0)
    ax.bar(["output tok/s"], [tput], color="tab:green")
    iv = doc.get("output_tokens_per_s_interval")
    if iv and iv.get("p10") is not None:
        _interval(ax, 0, iv["p10"], iv["p90"], "interval")
        ax.legend(fontsize=7)
    ax.set_title("Throughput")
    usd = doc.get("usd_per_million_tokens")
    ax.set_xlabel("%.0f tok/s per GPU%s" % (doc.get("per_gpu_output_tokens_per_s", 0.0),
                                           ", $%.3g/M tok" % usd if usd else ""))
    dep = doc.get("deployment", {})
    _title(fig, "infer %s on %s x%s (%s): tp%s pp%s x%s replicas" % (
        doc.get("model"), doc.get("sku"), doc.get("vms"), doc.get("scenario"), dep.get("tp"),
        dep.get("pp"), dep.get("replicas")))
    return fig


def _pareto(points, minimize_y):
    """The points no other point beats on both x (smaller) and y; sorted by x."""
    pts = sorted(points, key=lambda p: (p[0], p[1] if minimize_y else -p[1]))
    front, best = [], None
    for p in pts:
        if best is None or (p[1] < best if minimize_y else p[1] > best):
            front.append(p)
            best = p[1]
    return front


def _scatter_frontier(ax, rows, xk, yk, minimize_y, label_key, yscale=1.0):
    groups = {}
    for r in rows:
        if r.get(xk) is None or r.get(yk) is None:
            continue
        groups.setdefault(r.get(label_key), []).append(r)
    for g, rs in groups.items():
        ax.scatter([r[xk] for r in rs], [r[yk] * yscale for r in rs], label=str(g), s=24)
    pts = [(r[xk], r[yk] * yscale, r) for rs in groups.values() for r in rs]
    front = _pareto(pts, minimize_y)
    if front:
        ax.scatter([p[0] for p in front], [p[1] for p in front], s=90, facecolors="none",
                   edgecolors="k", label="Pareto frontier")
        if len(front) > 1:
            ax.step([p[0] for p in front], [p[1] for p in front], where="post", color="k", lw=1)
    for x, y, r in pts:
        if "rank" in r:
            ax.annotate(str(r["rank"]), (x, y), fontsize=7, xytext=(3, 3),
                        textcoords="offset points")
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)


# ---- plan train: time against cost ----
def _plan_train(doc, **_):
    rows = doc["results"]
    fig, (ax,) = _figure(1, width=6.5, height=4.5)
    if rows and rows[0].get("time_to_train_s") is not None and rows[0].get("cost_usd") is not None:
        xk, yk, xl, yl, ys = "cost_usd", "time_to_train_s", "cost (USD)", "time to train (days)", (
            1 / 86400)
    else:
        xk, yk, xl, yl, ys = "gpus", "step_time_s", "GPUs", "step time (s)", 1.0
    _scatter_frontier(ax, rows, xk, yk, True, "sku", yscale=ys)
    ax.set_xlabel(xl)
    ax.set_ylabel(yl)
    _title(fig, "plan train %s, gbs %s (%s): rank by %s" % (
        doc.get("model"), doc.get("gbs"), len(rows), doc.get("objective")))
    return fig


# ---- plan infer: throughput against cost per token ----
def _plan_infer(doc, **_):
    rows = doc["results"]
    fig, (ax,) = _figure(1, width=6.5, height=4.5)
    _scatter_frontier(ax, rows, "usd_per_million_tokens", "output_tokens_per_s", False, "sku")
    ax.set_xlabel("USD per million output tokens")
    ax.set_ylabel("output tokens/s")
    _title(fig, "plan infer (%s): %d configurations" % (doc.get("scenario"), len(rows)))
    return fig


# ---- validate: predicted against measured ----
def _validate(doc, **_):
    suites = [s for s in doc.get("suites", []) if s.get("rows")]
    fig, axes = _figure(max(len(suites), 1), width=4.2, height=4.0)
    for ax, s in zip(axes, suites):
        rows = [r for r in s["rows"] if r.get("measured") and r.get("predicted")]
        for calib, color, label in ((True, "tab:orange", "calibration"),
                                    (False, "tab:blue", "validation")):
            sel = [r for r in rows if bool(r.get("calibration")) == calib]
            ax.scatter([r["measured"] for r in sel], [r["predicted"] for r in sel], s=14,
                       color=color, label=label)
        if rows:
            lo = min(min(r["measured"], r["predicted"]) for r in rows)
            hi = max(max(r["measured"], r["predicted"]) for r in rows)
            ax.plot([lo, hi], [lo, hi], color="k", lw=1)
            if lo > 0 and hi / lo > 100:
                ax.set_xscale("log")
                ax.set_yscale("log")
        ax.set_xlabel("measured")
        ax.set_ylabel("predicted")
        ax.set_title(s.get("suite", ""))
        ax.legend(fontsize=7)
    _title(fig, "validate: predicted vs measured")
    return fig


# ---- fleet: time-to-train (or goodput) distribution and goodput vs checkpoint interval ----
def _numbers(d):
    return {k: v for k, v in d.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _quantiles(d):
    """[(percentile, value)] of an object {"p10": x, "p50": y, ...}, sorted."""
    if not isinstance(d, dict):
        return []
    return sorted((int(k[1:]), v) for k, v in _numbers(d).items()
                  if k.startswith("p") and k[1:].isdigit())


def _fleet(doc, result=None, intervals=(0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0), **kwargs):
    """Left: the Monte Carlo's distribution of the time to train (with --tokens) or of the
    goodput (with --days), and the closed form. Right: goodput against the checkpoint interval,
    from the same command re-run at `intervals` times the chosen interval (the Result keeps its
    arguments), with the chosen, Daly and Young intervals marked. Without the fields (another
    schema version) it falls back to the generic plot."""
    ttt = _quantiles(doc.get("time_to_train_days"))
    good = _quantiles(doc.get("goodput_quantiles"))
    ck = doc.get("checkpoint") if isinstance(doc.get("checkpoint"), dict) else {}
    if not (ttt or good):
        return _generic(doc, **kwargs)
    can_sweep = (result is not None and result.args is not None and ck.get("interval_s")
                 and "checkpoint-interval" in _option_names(result.command))
    fig, axes = _figure(2 if can_sweep else 1)
    ax = axes[0]
    q, label = (ttt, "time to train (days)") if ttt else (good, "goodput")
    ax.plot([v for _, v in q], [p for p, _ in q], marker="o", label="Monte Carlo (%s runs)"
            % doc.get("runs", "?"))
    if not ttt and doc.get("goodput_closed_form") is not None:
        ax.axvline(doc["goodput_closed_form"], color="k", ls="--", lw=1, label="closed form")
    ax.set_xlabel(label)
    ax.set_ylabel("percentile")
    ax.set_ylim(0, 100)
    ax.set_title("Distribution over runs")
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)
    if can_sweep:
        ax = axes[1]
        chosen = ck["interval_s"]
        xs, p10, p50, p90 = [], [], [], []
        for f in intervals:
            args = {k: v for k, v in result.args.items() if k != "trace"}
            args["checkpoint_interval"] = "%.10g" % (chosen * f)
            try:
                r = result_call(result.command, args)
            except ValueError:  # an interval the command refuses (shorter than a write)
                continue
            gq = dict(_quantiles(r.to_dict().get("goodput_quantiles")))
            xs.append(chosen * f)
            p10.append(gq.get(10))
            p50.append(gq.get(50))
            p90.append(gq.get(90))
        if xs:
            ax.fill_between(xs, p10, p90, alpha=0.2, label="p10-p90")
            ax.plot(xs, p50, marker="o", label="p50")
        for key, style, name in (("interval_s", "-", "chosen"), ("daly_interval_s", "--", "Daly"),
                                 ("young_interval_s", ":", "Young")):
            if ck.get(key):
                ax.axvline(ck[key], color="k", ls=style, lw=1, label=name)
        ax.set_xscale("log")
        ax.set_xlabel("checkpoint interval (s)")
        ax.set_ylabel("goodput")
        ax.set_title("Goodput vs checkpoint interval")
        ax.legend(fontsize=7)
        ax.grid(True, alpha=0.3)
    _title(fig, "fleet: %s on %s x%s, %s" % (doc.get("model"), doc.get("sku"), doc.get("vms"),
                                            "checkpoints to %s" % ck.get("target")
                                            if ck.get("target") else ""))
    return fig


def _option_names(command):
    from . import _api

    return set(_api._KEYWORDS.get(command, {}).values())


def result_call(command, args):
    from . import _api

    return _api.call(command, _warn=False, **args)  # the plotted call has warned already


# ---- anything else: its largest table's numbers, or its top-level numbers ----
def _generic(doc, **_):
    tables = {k: v for k, v in doc.items()
              if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)}
    fig, (ax,) = _figure(1, width=7.0, height=4.2)
    if tables:
        key = max(tables, key=lambda k: len(tables[k]))
        rows = tables[key]
        label = next((c for c in rows[0] if isinstance(rows[0][c], str)), None)
        num = next((c for c in rows[0] if c not in ("rank",) and isinstance(rows[0][c], (int, float))
                    and not isinstance(rows[0][c], bool)), None)
        if num is not None:
            names = [str(r.get(label, i)) for i, r in enumerate(rows)]
            ax.barh(names, [r.get(num) or 0 for r in rows], color="tab:blue")
            ax.invert_yaxis()
            ax.set_xlabel(num)
            ax.tick_params(axis="y", labelsize=7)
            ax.set_title("%s: %s" % (key, num))
            _title(fig, doc.get("schema", ""))
            return fig
    nums = _numbers(doc)
    ax.barh(list(nums.keys()), list(nums.values()), color="tab:blue")
    ax.invert_yaxis()
    if nums and min(nums.values()) > 0 and max(nums.values()) / min(nums.values()) > 1000:
        ax.set_xscale("log")
    ax.tick_params(axis="y", labelsize=7)
    _title(fig, doc.get("schema", ""))
    return fig


_PLOTS = {
    "train": _train,
    "collective": _collective,
    "infer": _infer,
    "plan_train": _plan_train,
    "plan_infer": _plan_infer,
    "validate": _validate,
}
