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
                                        fidelity="analytical"),
        "plan_infer": ndtwin.plan_infer(model="llama2-7b", vms=1, input_len=512, output_len=128,
                                        requests=128, top=6),
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


def test_fleet_plot_without_and_with_its_tables(tmp_path):
    # A fleet document (the fleet command draws its distribution and its checkpoint sweep).
    doc = {"schema": "ndtwin.fleet/1", "time_to_train_s": {"p10": 9.0, "p50": 10.0, "p90": 12.5},
           "checkpoint_sweep": [{"checkpoint_interval_s": x, "goodput": 1 - 1 / (x + 2)}
                                for x in (60, 300, 900, 1800)]}
    r = ndtwin.Result("fleet", json.dumps(doc, indent=2))
    fig = r.plot()
    assert len(fig.axes) == 2
    fig.savefig(tmp_path / "fleet.png", dpi=60)
    assert (tmp_path / "fleet.png").read_bytes()[:4] == b"\x89PNG"
    # Without them: the generic plot of its numbers.
    fig = ndtwin.Result("fleet", json.dumps({"schema": "ndtwin.fleet/1", "goodput": 0.9})).plot()
    fig.savefig(tmp_path / "fleet2.png", dpi=60)


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
