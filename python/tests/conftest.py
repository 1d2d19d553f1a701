"""Shared helpers of the Python tests: the CLI binary, and CLI argument lists as Python calls.

Run from the repository root (ctest does):
    PYTHONPATH=build/python NDTWIN_CLI=build/ndtwin /usr/bin/python3 -m pytest python/tests
"""

import math
import os
import re
import shlex
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLI = os.environ.get("NDTWIN_CLI", os.path.join(ROOT, "build", "ndtwin"))
CASES = os.path.join(ROOT, "tests", "cli", "cases")


@pytest.fixture(scope="session")
def cli():
    if not os.access(CLI, os.X_OK):
        pytest.fail("no ndtwin binary at %s (set NDTWIN_CLI)" % CLI)
    return CLI


def run_cli(argv):
    """(exit code, stdout, stderr) of `ndtwin ARGV`."""
    p = subprocess.run([CLI] + list(argv), capture_output=True, text=True, cwd=ROOT)
    return p.returncode, p.stdout, p.stderr


def parse_cli(args, registry):
    """A CLI command line (after `ndtwin`, as in tests/cli/cases/*/args) as (command, kwargs)
    for ndtwin.call, or None when a Python call cannot say it (a value the CLI's parser would
    refuse, an unknown flag)."""
    argv = shlex.split(args)
    rest = []
    i = 0
    while i < len(argv):
        if argv[i] == "--json":
            i += 1
        elif argv[i] == "--hw-data":
            return None
        else:
            rest.append(argv[i])
            i += 1
    by_name = {c["name"]: c for c in registry}
    if len(rest) >= 2 and rest[0] + " " + rest[1] in by_name:
        cmd, rest = by_name[rest[0] + " " + rest[1]], rest[2:]
    elif rest and rest[0] in by_name:
        cmd, rest = by_name[rest[0]], rest[1:]
    else:
        return None
    opts = {o["name"]: o for o in cmd["options"]}
    positional = [o for o in cmd["options"] if o["positional"]]
    kwargs = {}
    i = 0
    while i < len(rest):
        tok = rest[i]
        if tok.startswith("--"):
            name, eq, value = tok[2:].partition("=")
            o = opts.get(name)
            if o is None or o["positional"]:
                return None
            if o["type"] == "flag":
                kwargs[name] = True
                i += 1
                continue
            if not eq:
                if i + 1 >= len(rest):
                    return None
                value = rest[i + 1]
                i += 1
            i += 1
            if o["type"] == "int":
                if not re.fullmatch(r"-?[0-9]+", value):
                    return None
                kwargs[name] = int(value)
            elif o["type"] == "float":
                try:
                    x = float(value)
                except ValueError:
                    return None
                if not math.isfinite(x):
                    return None
                kwargs[name] = x
            elif o["type"] == "list":
                kwargs.setdefault(name, []).append(value)
            else:
                kwargs[name] = value
        else:
            if not positional:
                return None
            kwargs[positional.pop(0)["name"]] = tok
            i += 1
    return cmd, kwargs


def python_spelling(message, cmd):
    """The CLI's message with each of the command's "--name" as "name=" (as the core respells)."""
    names = {o["name"] for o in cmd["options"]}

    def one(m):
        name = m.group(1)
        return name.replace("-", "_") + "=" if name in names else m.group(0)

    return re.sub(r"(?<![a-z0-9_-])--([a-z0-9_-]*)", one, message)


def golden_cases():
    return sorted(os.listdir(CASES))


def read_case(name):
    d = os.path.join(CASES, name)

    def read(f, default=""):
        p = os.path.join(d, f)
        return open(p, encoding="utf-8").read() if os.path.exists(p) else default

    return read("args").strip(), int(read("code", "0").strip() or 0), read("stdout"), read("stderr")
