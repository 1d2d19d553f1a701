"""Every function of ndtwin against the CLI's --json for the same arguments, byte for byte."""

import inspect
import json

import pytest

import ndtwin
from conftest import ROOT, golden_cases, parse_cli, read_case, run_cli

A100 = "Standard_ND96amsr_A100_v4"
H100 = "Standard_ND96isr_H100_v5"

# (the CLI's arguments, the same call in Python)
CASES = [
    (["sku", "list"], lambda: ndtwin.skus()),
    (["sku", "list", "--gpu", "H100"], lambda: ndtwin.skus(gpu="H100")),
    (["sku", "show", "ND96isr_H100_v5"], lambda: ndtwin.sku("ND96isr_H100_v5")),
    (["model", "list"], lambda: ndtwin.models()),
    (["model", "show", "llama2-70b"], lambda: ndtwin.model("llama2-70b")),
    (["topo", "--sku", H100, "--vms", "2", "--no-rail-optimized"],
     lambda: ndtwin.topo(sku=H100, vms=2, no_rail_optimized=True)),
    (["collective", "--sku", H100, "--vms", "2", "--op", "allgather", "--min-bytes", "1M",
      "--max-bytes", "64M", "--step-factor", "8"],
     lambda: ndtwin.collective(sku=H100, vms=2, op="allgather", min_bytes="1M", max_bytes="64M",
                               step_factor=8)),
    (["train", "--sku", A100, "--vms", "2", "--model", "llama2-7b", "--gbs", "64", "--tp", "2",
      "--tokens", "1e9"],
     lambda: ndtwin.train(sku=A100, vms=2, model="llama2-7b", gbs=64, tp=2, tokens=1e9)),
    (["train", "--sku", A100, "--vms", "1", "--layers", "12", "--hidden", "768", "--heads", "12",
      "--gbs", "32"],
     lambda: ndtwin.train(sku=A100, layers=12, hidden=768, heads=12, gbs=32)),
    (["infer", "--sku", H100, "--model", "llama2-7b", "--requests", "128"],
     lambda: ndtwin.infer(sku=H100, model="llama2-7b", requests=128)),
    (["plan", "train", "--model", "llama2-7b", "--gbs", "64", "--vms", "1", "--sku", A100,
      "--top", "3", "--tokens", "1e11", "--fidelity", "analytical"],
     lambda: ndtwin.plan_train(model="llama2-7b", gbs=64, vms=1, sku=A100, top=3, tokens=1e11,
                               fidelity="analytical")),
    (["plan", "train", "--model", "mixtral-8x7b", "--gbs", "64", "--vms", "2", "--sku", H100,
      "--top", "3", "--ep", "4", "--fidelity", "analytical"],
     lambda: ndtwin.plan_train(model="mixtral-8x7b", gbs=64, vms=2, sku=H100, top=3, ep=4,
                               fidelity="analytical")),
    (["plan", "infer", "--model", "llama2-7b", "--sku", H100, "--vms", "1", "--input-len", "512",
      "--output-len", "128", "--requests", "256"],
     lambda: ndtwin.plan_infer(model="llama2-7b", sku=H100, vms=1, input_len=512,
                               output_len=128, requests=256)),
    (["validate", "--suite", "collectives"], lambda: ndtwin.validate(suite="collectives")),
]


@pytest.mark.parametrize("argv,fn", CASES, ids=[" ".join(c[0][:2]) for c in CASES])
def test_same_json_as_cli(cli, argv, fn):
    code, out, err = run_cli(["--json"] + argv)
    assert code == 0, err
    r = fn()
    assert r.to_json() + "\n" == out  # byte-identical with the CLI's --json
    assert r.to_dict() == json.loads(out)


def test_every_command_has_a_function():
    names = {c["name"]: c["python_name"] for c in ndtwin.commands()}
    for name, pyname in names.items():
        assert callable(getattr(ndtwin, pyname)), name
    assert names["sku list"] == "skus" and names["sku show"] == "sku"
    assert names["model list"] == "models" and names["model show"] == "model"
    assert names["plan train"] == "plan_train" and names["plan infer"] == "plan_infer"


def test_every_known_command_is_compared_with_the_cli():
    covered = {" ".join(a[:2]) if a[0] in ("sku", "model", "plan") else a[0] for a, _ in CASES}
    known = {"sku list", "sku show", "model list", "model show", "topo", "collective", "train",
             "infer", "plan train", "plan infer", "validate"}
    assert known <= covered
    # Commands added to the registry later (fleet, sweep, ...) come as functions with no Python
    # code; test_new_commands_run checks they run.


def test_new_commands_run():
    known = {"sku list", "sku show", "model list", "model show", "topo", "collective", "train",
             "infer", "plan train", "plan infer", "validate"}
    for c in ndtwin.commands():
        if c["name"] in known:
            continue
        try:
            r = getattr(ndtwin, c["python_name"])()
        except ndtwin.Error as e:
            assert e.code != "internal", str(e)
        else:
            assert json.loads(r.to_json()) == r.to_dict()


def test_keyword_arguments_are_the_cli_flags_with_defaults():
    for c in ndtwin.commands():
        sig = inspect.signature(getattr(ndtwin, c["python_name"]))
        params = [p for p in sig.parameters if p != "data_dir"]
        assert sorted(params) == sorted(o["python_name"] for o in c["options"]), c["name"]
        for o in c["options"]:
            p = sig.parameters[o["python_name"]]
            want = inspect.Parameter.empty if o["required"] else o["default"]
            assert p.default == want, (c["name"], o["name"])
    sig = inspect.signature(ndtwin.collective)
    assert sig.parameters["min_bytes"].default == "8"
    assert sig.parameters["step_factor"].default == 2
    train = inspect.signature(ndtwin.train)
    assert train.parameters["cp"].default == 1
    assert train.parameters["tp"].default is None  # omitted: the best feasible is chosen
    assert train.parameters["mbs"].default is None  # omitted: the command chooses
    assert train.parameters["sku"].default is inspect.Parameter.empty  # required


def test_omitted_and_none_are_the_default(cli):
    a = ndtwin.train(sku=A100, model="llama2-7b", gbs=64)
    b = ndtwin.train(sku=A100, model="llama2-7b", gbs=64, mbs=None, tp=None, vms=1)
    assert a == b


def test_fields_as_attributes():
    r = ndtwin.train(sku=A100, vms=2, model="llama2-7b", gbs=64, tp=2)
    d = r.to_dict()
    assert r.step_time_s == d["step_time_s"]
    assert r.memory.peak_bytes_per_gpu == d["memory"]["peak_bytes_per_gpu"]
    assert r["strategy"]["tp"] == 2 and r.strategy.tp == 2
    assert "step_time_s" in r and "step_time_s" in dir(r)
    with pytest.raises(AttributeError):
        r.no_such_field
    r.to_dict()["step_time_s"] = 0  # to_dict is a copy
    assert r.step_time_s == d["step_time_s"]
    assert "<table" in r._repr_html_() and "step_time_s" in r._repr_html_()
    assert "train" in repr(r)


def test_model_as_hugging_face_config_path_and_dict(cli, tmp_path):
    config = {"_name_or_path": "meta-llama/Llama-2-7b-hf", "model_type": "llama",
              "architectures": ["LlamaForCausalLM"], "hidden_size": 4096,
              "intermediate_size": 11008, "num_hidden_layers": 32, "num_attention_heads": 32,
              "num_key_value_heads": 32, "vocab_size": 32000, "max_position_embeddings": 4096,
              "rms_norm_eps": 1e-05, "tie_word_embeddings": False, "hidden_act": "silu"}
    path = tmp_path / "Llama-2-7b-hf" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(config))
    args = ["train", "--sku", A100, "--gbs", "64", "--tp", "2"]
    code, out, err = run_cli(["--json"] + args + ["--hf-config", str(path)])
    assert code == 0, err
    by_path = ndtwin.train(sku=A100, gbs=64, tp=2, model=str(path))
    assert by_path.to_json() + "\n" == out
    by_pathlike = ndtwin.train(sku=A100, gbs=64, tp=2, model=path)
    assert by_pathlike == by_path
    by_dict = ndtwin.train(sku=A100, gbs=64, tp=2, model=config)
    assert by_dict.model == "Llama-2-7b-hf"
    assert by_dict.step_time_s == by_path.step_time_s
    assert by_dict.memory == by_path.memory
    # The same dict gives the same document (the file is named by its content).
    assert ndtwin.train(sku=A100, gbs=64, tp=2, model=dict(config)) == by_dict
    # model show takes it too.
    assert ndtwin.model(config).layers == 32


def test_model_as_ndtwin_dict():
    # data/models/gpt3-125m.yaml as a dict, under another name: the same numbers as the preset.
    spec = {"name": "my-gpt3-125m", "arch": "gpt", "source": "a test", "layers": 12,
            "hidden": 768, "heads": 12, "ffn_hidden": 3072, "vocab": 50257, "seq_len": 2048,
            "activation": "gelu", "norm": "layernorm", "tied_embeddings": True, "biases": True,
            "learned_positions": True, "dropout": 0.1}
    r = ndtwin.model(spec)
    assert r.name == "my-gpt3-125m" and r.layers == 12
    t = ndtwin.train(sku=A100, gbs=32, model=spec)
    preset = ndtwin.train(sku=A100, gbs=32, model="gpt3-125m")
    assert t.model == "my-gpt3-125m"
    assert t.step_time_s == preset.step_time_s and t.memory == preset.memory


def test_golden_json_cases_match(monkeypatch):
    """The golden cases that print --json: the same document from Python."""
    monkeypatch.chdir(ROOT)  # the cases name files relative to the repository
    registry = ndtwin.commands()
    checked = 0
    for name in golden_cases():
        args, code, stdout, _ = read_case(name)
        if code != 0 or "--json" not in args.split() or not stdout:
            continue
        parsed = parse_cli(args, registry)
        assert parsed is not None, name
        cmd, kwargs = parsed
        assert ndtwin.call(cmd["name"], **kwargs).to_json() + "\n" == stdout, name
        checked += 1
    assert checked >= 5


def test_warnings_are_python_warnings():
    # The CLI prints "ndtwin: warning: ..." on stderr (tests/cli/cases/topo_scaleset_warning).
    with pytest.warns(ndtwin.NdtwinWarning, match="101 VMs exceed a scale set.s default 100 VMs"):
        r = ndtwin.topo(sku="ND96isr_H100_v5", vms=101, tiers=3, radix=32)
    assert r.warnings and r.warnings[0].startswith("101 VMs exceed a scale set's default 100 VMs")


def test_plan_notes_are_kept(cli):
    """plan train and plan infer print what they skipped or assumed as "plan: note: ..." lines on
    stderr, with or without --json (no document carries them): the Result keeps the same lines as
    r.notes (a V100 has no bf16 tensor cores, an A100 no fp8 ones: compute/ PrecisionNote)."""
    V100 = "Standard_ND40rs_v2"
    for argv, call in [
            (["plan", "train", "--sku", V100, "--vms", "1", "--model", "llama2-7b", "--gbs", "8",
              "--top", "2"],
             lambda: ndtwin.plan_train(sku=V100, vms=1, model="llama2-7b", gbs=8, top=2)),
            (["plan", "infer", "--sku", A100, "--vms", "1", "--model", "llama2-7b", "--weights",
              "fp8", "--requests", "64", "--top", "2"],
             lambda: ndtwin.plan_infer(sku=A100, vms=1, model="llama2-7b", weights="fp8",
                                       requests=64, top=2))]:
        code, _, stderr = run_cli(["--json"] + argv)
        assert code == 0
        want = [l for l in stderr.splitlines() if l.startswith("plan: note: ")]
        assert want, argv  # the case has a note to keep
        r = call()
        assert r.notes == want
    assert "has no bf16 tensor cores" in ndtwin.plan_train(
        sku=V100, vms=1, model="llama2-7b", gbs=8, top=2).notes[0]
    # A command without notes has none.
    assert ndtwin.skus().notes == []
