"""examples/capacity_planning.ipynb runs top to bottom (nbconvert --execute), so it cannot rot."""

import json
import os
import subprocess
import sys

from conftest import ROOT

NOTEBOOK = os.path.join(ROOT, "examples", "capacity_planning.ipynb")


def test_capacity_planning_notebook_executes(tmp_path):
    # A kernel spec for this interpreter, first on JUPYTER_PATH: the notebook runs on the Python
    # that runs the tests (a user's own "python3" kernel may be another interpreter).
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}))
    # The kernel imports the ndtwin these tests import (the build tree's or an installed one).
    import ndtwin

    path = [os.path.dirname(os.path.dirname(os.path.abspath(ndtwin.__file__)))]
    path += [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = dict(os.environ, JUPYTER_PATH=str(tmp_path / "jupyter"), MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join(path))
    out = tmp_path / "executed.ipynb"
    p = subprocess.run(
        [sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute",
         "--ExecutePreprocessor.kernel_name=python3", "--ExecutePreprocessor.timeout=300",
         "--output", str(out), NOTEBOOK],
        capture_output=True, text=True, env=env, cwd=os.path.dirname(NOTEBOOK))
    assert p.returncode == 0, p.stderr[-4000:]
    nb = json.loads(out.read_text())
    outputs = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    pngs = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(pngs) >= 5  # the sweep, a plan, the training step, the service plan, the service
