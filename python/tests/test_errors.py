"""Errors: ndtwin.Error (a ValueError) with the CLI's one-line message, spelled the Python way."""

import math
import re

import pytest

import ndtwin
from conftest import ROOT, golden_cases, parse_cli, python_spelling, read_case, run_cli

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
    assert str(e.value) == "tp= takes an integer (got \"eight\")"
    with pytest.raises(ndtwin.Error) as e:
        ndtwin.call("collective", nosuch=1)
    assert str(e.value).startswith("unknown option 'nosuch='; valid: sku=, vms=, ")
    assert "min_bytes=" in str(e.value)
    with pytest.raises(ndtwin.Error) as e:
        ndtwin.models(no_such=1)  # as Python spelled it; model list takes no option
    assert str(e.value) == "unknown option 'no_such='; valid: none"


def test_required_option():
    with pytest.raises(ndtwin.Error) as e:
        ndtwin.train(model="llama2-7b", gbs=8)
    assert str(e.value) == "sku= is required"  # the CLI: "--sku is required"
    with pytest.raises(ndtwin.Error) as e:
        ndtwin.sku()  # the positional NAME, as the CLI says it
    assert str(e.value).startswith("sku show needs a VM size")
    with pytest.raises(TypeError):
        ndtwin.sku("a", "b")  # one positional only


def test_non_finite_and_odd_values():
    with pytest.raises(ndtwin.Error) as e:
        ndtwin.train(sku=A100, model="llama2-7b", gbs=8, tokens=math.inf)
    assert str(e.value) == "tokens= must be a finite number (got inf)"
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


def _cli_message(stderr, cmd):
    """The CLI's error line as Python says it: after "ndtwin: error: ", without the pointer to
    the CLI's own help (" (see: ndtwin train --help)"), options respelled."""
    line = [l for l in stderr.splitlines() if l.startswith("ndtwin: error: ")][-1]
    line = re.sub(r" \(see: ndtwin [a-z ]*--help\)$", "", line[len("ndtwin: error: "):])
    for o in cmd["options"]:  # a positional the CLI names bare ("spec is required")
        if o["positional"] and line.startswith(o["name"] + " is required"):
            line = o["python_name"] + "=" + line[len(o["name"]):]
    return python_spelling(line, cmd)


def test_every_function_says_its_errors_in_one_style(cli):
    """A few bad inputs to every function: each raises ndtwin.Error whose message is one line,
    never prefixed with the command (the CLI and the web print none; Error.command names it), with
    options in the Python spelling (no "--"). Where the CLI can be given the same bad input (a
    required option left out, a value out of its range), the message is the CLI's own line, e.g.
    `ndtwin train --model llama2-7b --gbs 8` prints "--sku is required (see: ndtwin train --help)"
    and ndtwin.train(model="llama2-7b", gbs=8) raises "sku= is required"."""
    checked_cli = 0
    for c in ndtwin.commands():
        fn = getattr(ndtwin, c["python_name"])
        names = {o["name"] for o in c["options"]}
        bad = [dict(no_such_option=1)]
        numeric = [o for o in c["options"] if o["type"] in ("int", "float") and not o["positional"]]
        if numeric:
            bad.append({numeric[0]["python_name"]: "many"})
            bad.append({numeric[0]["python_name"]: math.nan})
        if "vms" in names:
            bad.append(dict(vms=-1))
        for kwargs in bad:
            with pytest.raises(ndtwin.Error) as e:
                fn(**kwargs)
            msg = str(e.value)
            assert e.value.command == c["name"]
            assert "\n" not in msg and "--" not in msg, (c["name"], kwargs, msg)
            assert not msg.startswith(c["name"] + ":"), (c["name"], kwargs, msg)
            assert not msg.startswith("option '"), (c["name"], kwargs, msg)
        # A required option left out: the CLI's words.
        required = [o for o in c["options"] if o["required"] and not o["positional"]]
        if required:
            with pytest.raises(ndtwin.Error) as e:
                fn()
            code, _, stderr = run_cli(c["name"].split())
            assert code == 2
            assert str(e.value) == _cli_message(stderr, c), c["name"]
            checked_cli += 1
    # A value out of its declared range, for the commands that size a cluster.
    for name, kwargs, argv in [
            ("train", dict(sku=A100, model="llama2-7b", gbs=8, tp=0),
             ["--sku", A100, "--model", "llama2-7b", "--gbs", "8", "--tp", "0"]),
            ("fleet", dict(sku=A100, vms=2, step_time=10, days=3, model="llama2-7b", runs=0),
             ["--sku", A100, "--vms", "2", "--step-time", "10", "--days", "3", "--model",
              "llama2-7b", "--runs", "0"]),
            ("collective", dict(sku=A100, vms=0), ["--sku", A100, "--vms", "0"])]:
        c = next(x for x in ndtwin.commands() if x["name"] == name)
        with pytest.raises(ndtwin.Error) as e:
            ndtwin.call(name, **kwargs)
        code, _, stderr = run_cli([name] + argv)
        assert code == 2
        assert str(e.value) == _cli_message(stderr, c), name
        checked_cli += 1
    assert checked_cli >= 5
