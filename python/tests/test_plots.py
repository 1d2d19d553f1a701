"""A plot of each kind, saved to PNG; tables as pandas DataFrames."""

import json

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

import ndtwin  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

A100 = "Standard_ND96amsr_A100_v4"
H100 = "Standard_ND96isr_H100_v5"


@pytest.fixture(scope="module")
def results():
    return {
        "train": ndtwin.train(sku=A100, vms=2, model="llama2-7b", gbs=64, tp=2),
        "collective": ndtwin.collective(sku=H100, vms=2, max_bytes="64M", step_factor=4),
        "infer": ndtwin.infer(sku=H100, model="llama2-7b", requests=128),
        "plan_train": ndtwin.plan_train(model="llama2-7b", gbs=64, vms=1, top=8, tokens=1e11,
                                        skus=A100 + "," + H100, fidelity="analytical"),
        "plan_infer": ndtwin.plan_infer(model="llama2-7b", vms=1, input_len=512, output_len=128,
                                        skus=A100 + "," + H100, requests=128, top=6),
        "validate": ndtwin.validate(suite="collectives"),
        "skus": ndtwin.skus(),
        "topo": ndtwin.topo(sku=H100, vms=2),
    }


KINDS = ["train", "collective", "infer", "plan_train", "plan_infer", "validate", "skus", "topo"]


@pytest.mark.parametrize("kind", KINDS)
def test_plot_png(results, kind, tmp_path):
    fig = results[kind].plot()
    assert isinstance(fig, Figure)
    assert fig.axes
    path = tmp_path / (kind + ".png")
    fig.savefig(path, dpi=60)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def _fleet_doc(interval, goodput):
    # The fields of an ndtwin.fleet/1 document the plot reads (tests/cli/cases/fleet_*).
    return {"schema": "ndtwin.fleet/1", "sku": "Standard_ND96amsr_A100_v4", "model": "gpt3-175b",
            "vms": 128, "runs": 200, "time_to_train_days": None,
            "checkpoint": {"target": "managed-disk", "interval_s": interval,
                           "daly_interval_s": 2929.8, "young_interval_s": 2945.8},
            "goodput": goodput, "goodput_closed_form": 0.979,
            "goodput_quantiles": {"p10": goodput - 0.004, "p50": goodput, "p90": goodput + 0.004}}


def test_fleet_plot(tmp_path, monkeypatch):
    from ndtwin import _plot

    # Goodput against the interval: the command re-run at multiples of the chosen interval (here
    # a stand-in for the command: goodput falls off either side of 2912 s).
    seen = []

    def rerun(command, args):
        x = float(args["checkpoint_interval"])
        seen.append(x)
        return ndtwin.Result(command, json.dumps(_fleet_doc(x, 0.98 - 0.01 * abs(
            __import__("math").log(x / 2912.5)))), args=args)

    monkeypatch.setattr(_plot, "result_call", rerun)
    monkeypatch.setattr(_plot, "_option_names", lambda command: {"checkpoint-interval"})
    r = ndtwin.Result("fleet", json.dumps(_fleet_doc(2912.5, 0.98)),
                      args={"sku": "ND96amsr_A100_v4", "gpus": 1024, "step_time": 12.5})
    fig = r.plot()
    assert len(fig.axes) == 2
    assert seen == pytest.approx([2912.5 * f for f in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)])
    line = fig.axes[1].get_lines()[0]
    assert list(line.get_xdata()) == seen
    fig.savefig(tmp_path / "fleet.png", dpi=60)
    assert (tmp_path / "fleet.png").read_bytes()[:4] == b"\x89PNG"
    # A document without the fields: the generic plot of its numbers.
    fig = ndtwin.Result("fleet", json.dumps({"schema": "ndtwin.fleet/2", "x": 0.9})).plot()
    fig.savefig(tmp_path / "fleet2.png", dpi=60)


def test_fleet_command_plot(tmp_path):
    """The fleet command itself, when the registry has it."""
    if "fleet" not in {c["name"] for c in ndtwin.commands()}:
        pytest.skip("no fleet command in this build")
    r = ndtwin.fleet(sku="ND96amsr_A100_v4", gpus=1024, step_time=12.5, days=30,
                     model="gpt3-175b", checkpoint_to="managed-disk", spares=4, runs=50)
    fig = r.plot()
    assert len(fig.axes) == 2 and fig.axes[1].get_lines()
    fig.savefig(tmp_path / "fleet.png", dpi=60)


def test_frames(results):
    pt = results["plan_train"]
    df = pt.to_frame()
    assert len(df) == len(pt.results) and list(df["rank"]) == [r["rank"] for r in pt.results]
    assert df["step_time_s"].tolist() == [r["step_time_s"] for r in pt.results]
    coll = results["collective"]
    df = coll.to_frame()
    assert df["bytes"].tolist() == [r["bytes"] for r in coll.rows]
    assert "busbw_GBps_interval.p10" in df.columns
    val = results["validate"]
    df = val.to_frame()
    assert len(df) == sum(len(s["rows"]) for s in val.suites)
    assert set(df["suite"]) == {"collectives"} and "predicted" in df.columns
    skus = results["skus"].to_frame()
    assert "Standard_ND96isr_H100_v5" in set(skus["name"])
    assert len(results["plan_infer"].to_frame()) == len(results["plan_infer"].results)
    # A document without a table: one row of its fields, nested ones dotted.
    t = results["train"].to_frame()
    assert len(t) == 1 and t["memory.peak_bytes_per_gpu"][0] == results["train"].memory[
        "peak_bytes_per_gpu"]
    for r in results.values():
        assert "<table" in r._repr_html_()
