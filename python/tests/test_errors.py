"""Errors: ndtwin.Error (a ValueError) with the CLI's one-line message, spelled the Python way."""

import math

import pytest

import ndtwin
from conftest import ROOT, golden_cases, parse_cli, python_spelling, read_case

A100 = "Standard_ND96amsr_A100_v4"


def test_error_is_a_value_error_with_the_message_and_code():
    with pytest.raises(ndtwin.Error) as e:
        ndtwin.train(sku="Standard_NoSuchSize", model="llama2-7b", gbs=8)
    assert isinstance(e.value, ValueError)
    assert e.value.code == "not_found"
    assert e.value.command == "train"
    assert "NoSuchSize" in str(e.value) and "\n" not in str(e.value)


def test_options_are_spelled_the_python_way():
    # The CLI says "--min-bytes (1G) is larger than --max-bytes (1M)".
    with pytest.raises(ndtwin.Error) as e:
        ndtwin.collective(sku=A100, min_bytes="1G", max_bytes="1M")
    assert str(e.value) == "min_bytes= (1G) is larger than max_bytes= (1M)"
    assert e.value.code == "invalid_input"
    # The binding's messages too: the option, and the valid ones of an unknown option.
    with pytest.raises(ndtwin.Error) as e:
        ndtwin.train(sku=A100, model="llama2-7b", gbs=8, tp="eight")
    assert str(e.value) == "option 'tp=' takes an integer (got \"eight\")"
    with pytest.raises(ndtwin.Error) as e:
        ndtwin.call("collective", nosuch=1)
    assert str(e.value).startswith("collective: unknown option 'nosuch'; valid: sku=, vms=, ")
    assert "min_bytes=" in str(e.value)


def test_required_option():
    with pytest.raises(ndtwin.Error) as e:
        ndtwin.train(model="llama2-7b", gbs=8)
    assert str(e.value) == "train: option 'sku=' is required"
    with pytest.raises(ndtwin.Error) as e:
        ndtwin.sku()  # the positional NAME, as the CLI says it
    assert str(e.value).startswith("sku show needs a VM size")
    with pytest.raises(TypeError):
        ndtwin.sku("a", "b")  # one positional only


def test_non_finite_and_odd_values():
    with pytest.raises(ndtwin.Error) as e:
        ndtwin.train(sku=A100, model="llama2-7b", gbs=8, tokens=math.inf)
    assert "tokens=" in str(e.value)
    with pytest.raises(ndtwin.Error):
        ndtwin.train(sku=A100, model="llama2-7b", gbs=8, tp=object())
    with pytest.raises(ndtwin.Error) as e:
        ndtwin.call("no such command")
    assert "unknown command" in str(e.value)


def test_bad_data_dir(tmp_path):
    with pytest.raises(ndtwin.Error) as e:
        ndtwin.skus(data_dir=str(tmp_path / "missing"))
    assert e.value.code != "ok"
    ndtwin.set_data_dir(tmp_path / "missing")
    try:
        with pytest.raises(ndtwin.Error):
            ndtwin.skus()
    finally:
        ndtwin.set_data_dir(None)
    assert ndtwin.skus().skus


def test_golden_errors_have_the_cli_message(monkeypatch):
    """Each golden error case the CLI's own parser did not refuse (those end "--help)"): Python
    raises ndtwin.Error with the same message, options respelled."""
    monkeypatch.chdir(ROOT)  # the cases name files relative to the repository
    registry = ndtwin.commands()
    by_name = {c["name"]: c for c in registry}
    checked = 0
    for name in golden_cases():
        args, code, _, stderr = read_case(name)
        errors = [l for l in stderr.splitlines() if l.startswith("ndtwin: error: ")]
        if code == 0 or not errors or errors[-1].endswith("--help)"):
            continue
        parsed = parse_cli(args, registry)
        if parsed is None:
            continue
        cmd, kwargs = parsed
        want = python_spelling(errors[-1][len("ndtwin: error: "):], by_name[cmd["name"]])
        with pytest.raises(ndtwin.Error) as e:
            ndtwin.call(cmd["name"], **kwargs)
        assert str(e.value) == want, name
        assert (e.value.code == "internal") == (code == 1), name
        checked += 1
    assert checked >= 40
