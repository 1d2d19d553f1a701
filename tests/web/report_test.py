"""Opens a --report file of each command from disk in headless Chromium with the network off and
checks every chart rendered (an SVG with marks) and the page's numbers are the CLI's JSON.
Usage: /usr/bin/python3 tests/web/report_test.py build/ndtwin OUTDIR"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from browser import chromium  # noqa: E402

NDTWIN, OUT = sys.argv[1], sys.argv[2]
CASES = {
    "train": ["train", "--sku", "Standard_ND96amsr_A100_v4", "--vms", "128", "--model", "gpt3-175b",
              "--gbs", "1536", "--tp", "8", "--pp", "8", "--vpp", "12", "--mbs", "1",
              "--recompute", "full"],
    "infer": ["infer", "--sku", "Standard_ND96isr_H100_v5", "--model", "llama2-70b", "--scenario",
              "server", "--qps", "10", "--tp", "4", "--requests", "300"],
    "collective": ["collective", "--sku", "Standard_ND96isr_H100_v5", "--vms", "2", "--op",
                   "allreduce", "--min-bytes", "1K", "--max-bytes", "1G"],
    "topo": ["topo", "--sku", "ND128isr_GB300_v6", "--vms", "18"],
    "plan_train": ["plan", "train", "--model", "llama2-7b", "--gbs", "64", "--vms", "1", "--sku",
                   "Standard_ND96amsr_A100_v4", "--top", "40", "--tokens", "1e11", "--fidelity",
                   "analytical"],
    "plan_infer": ["plan", "infer", "--model", "llama2-7b", "--sku", "Standard_ND96isr_H100_v5",
                   "--vms", "1", "--input-len", "512", "--output-len", "128", "--requests", "512"],
    "sku_list": ["sku", "list"],
    "hpc_hpl": ["hpc", "--sku", "ND96asr_v4", "--vms", "4", "--bench", "hpl"],
    "hpc_stream": ["hpc", "--sku", "ND96isr_H100_v5", "--bench", "stream"],
    "hpc_osu": ["hpc", "--sku", "ND128isr_GB300_v6", "--vms", "19", "--bench", "osu-latency"],
    "hpc_allreduce": ["hpc", "--sku", "ND96isr_H100_v5", "--vms", "16", "--bench",
                      "osu-allreduce"],
    "hpc_hpcg": ["hpc", "--sku", "ND96asr_v4", "--vms", "4", "--bench", "hpcg"],
    "hpc_halo3d": ["hpc", "--sku", "ND96isr_H100_v5", "--vms", "16", "--bench", "halo3d"],
}
# Charts each report must draw (the chart specs per schema in report/html.cc); --report turns on
# the charts' data: train's timeline (a Gantt), infer's (batch and KV use over time), the
# planners' points (every configuration scored).
CHARTS = {"train": 3, "infer": 5, "collective": 2, "topo": 2, "plan_train": 1, "plan_infer": 1,
          "sku_list": 0, "hpc_hpl": 1, "hpc_stream": 1, "hpc_osu": 2, "hpc_allreduce": 1,
          "hpc_hpcg": 1, "hpc_halo3d": 1}
# Titles of the new charts, and the JSON section each draws from.
NEW = {"train": ("Pipeline timeline of one step", "timeline"),
       "infer": ("KV-cache use over time", "timeline"),
       "plan_train": ("Configurations and the Pareto frontier", "points"),
       "plan_infer": ("Configurations and the Pareto frontier", "points")}

os.makedirs(OUT, exist_ok=True)
failures = []
driver = chromium(offline=True)
try:
    for name, args in CASES.items():
        path = os.path.abspath(os.path.join(OUT, "report_%s.html" % name))
        cli = subprocess.run([NDTWIN, "--json", "--report", path] + args, capture_output=True,
                             text=True, check=True)
        want = json.loads(cli.stdout)
        driver.get("file://" + path)
        if CHARTS[name] > 0:
            deadline = time.time() + 30
            while time.time() < deadline and driver.execute_script(
                    "return document.body.getAttribute('data-charts-done')") != "true":
                time.sleep(0.1)
        stats = driver.execute_script("""
            return Array.from(document.querySelectorAll('.vl')).map(function (el) {
              var svg = el.querySelector('svg');
              return {rendered: el.getAttribute('data-rendered'), error: el.getAttribute('data-error'),
                      marks: svg ? svg.querySelectorAll('path, rect, line, circle, symbol').length : 0,
                      width: svg ? svg.getBoundingClientRect().width : 0};
            });""")
        if len(stats) != CHARTS[name]:
            failures.append("%s: %d charts on the page, want %d" % (name, len(stats), CHARTS[name]))
        for i, s in enumerate(stats):
            if s["rendered"] != "true" or s["marks"] < 3 or s["width"] < 50:
                failures.append("%s: chart %d did not render: %s" % (name, i, s))
        got = json.loads(driver.execute_script(
            "return document.getElementById('ndt-doc').textContent"))
        if got != want:
            failures.append("%s: the embedded JSON differs from the CLI's --json" % name)
        if name in NEW:
            title, key = NEW[name]
            titles = driver.execute_script(
                "return Array.from(document.querySelectorAll('.chart h3')).map(e => e.textContent)")
            if title not in titles or key not in want or not want[key]["rows"]:
                failures.append("%s: no '%s' chart or no %s rows (%s)" % (name, title, key, titles))
        if name == "plan_train" and want["points"]["total"] <= len(want["results"]):
            failures.append("plan_train: %d points, no more than the %d kept"
                            % (want["points"]["total"], len(want["results"])))
        driver.save_screenshot(os.path.join(OUT, "report_%s.png" % name))
        if name in NEW:  # the new chart itself, scrolled into view
            driver.execute_script("Array.from(document.querySelectorAll('.chart h3')).find("
                                  "e => e.textContent === arguments[0]).scrollIntoView()",
                                  NEW[name][0])
            driver.save_screenshot(os.path.join(OUT, "report_%s_%s.png" % (name, NEW[name][1])))
        print("%-11s %d charts ok" % (name, len(stats)))
    # Deterministic: the same command writes the same bytes.
    again = os.path.join(OUT, "report_train_again.html")
    subprocess.run([NDTWIN, "--report", again] + CASES["train"], capture_output=True, check=True)
    with open(again, "rb") as a, open(os.path.join(OUT, "report_train.html"), "rb") as b:
        if a.read() != b.read():
            failures.append("train: two runs wrote different reports")
finally:
    driver.quit()
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
