"""`ndtwin serve` end to end: the API answers each command's CLI --json bytes; every error path is
HTTP 400/404 with {"error": one line}; a load test (8 clients x 200 requests, mixed valid and
invalid: none lost or mis-answered, p50/p99 printed); a browser fills the training form and the
page's numbers equal the CLI's JSON; Ctrl-C stops the server.
Usage: /usr/bin/python3 tests/web/serve_test.py build/ndtwin OUTDIR"""
import atexit
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))

NDTWIN, OUT = sys.argv[1], sys.argv[2]
os.makedirs(OUT, exist_ok=True)
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL:", msg)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


PORT = free_port()
BASE = "http://127.0.0.1:%d" % PORT
server = subprocess.Popen([NDTWIN, "serve", "--port", str(PORT), "--threads", "4"],
                          stderr=subprocess.PIPE, text=True)
atexit.register(lambda: server.poll() is None and server.kill())  # even when a check raises
line = server.stderr.readline()
check("listening on http://127.0.0.1:%d/" % PORT in line, "serve's first line: %r" % line)


def post(path, body):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def cli(args):
    return subprocess.run([NDTWIN, "--json"] + args, capture_output=True, text=True, check=True).stdout


# 1. Each command's JSON equals the CLI's, byte for byte.
SAME = [
    ("topo", {"sku": "ND96amsr_A100_v4", "vms": 2}, ["topo", "--sku", "ND96amsr_A100_v4", "--vms", "2"]),
    ("train", {"sku": "Standard_ND96isr_H100_v5", "vms": 2, "model": "llama2-7b", "gbs": 64, "tp": 2},
     ["train", "--sku", "Standard_ND96isr_H100_v5", "--vms", "2", "--model", "llama2-7b", "--gbs",
      "64", "--tp", "2"]),
    ("infer", {"sku": "Standard_ND96isr_H100_v5", "model": "llama2-70b", "scenario": "server",
               "qps": 5, "tp": 4, "requests": 200},
     ["infer", "--sku", "Standard_ND96isr_H100_v5", "--model", "llama2-70b", "--scenario", "server",
      "--qps", "5", "--tp", "4", "--requests", "200"]),
    ("collective", {"sku": "Standard_ND96isr_H100_v5", "vms": 2, "op": "allgather",
                    "min-bytes": "1M", "max-bytes": "64M", "step-factor": 8},
     ["collective", "--sku", "Standard_ND96isr_H100_v5", "--vms", "2", "--op", "allgather",
      "--min-bytes", "1M", "--max-bytes", "64M", "--step-factor", "8"]),
    ("plan-train", {"model": "llama2-7b", "gbs": 64, "vms": 1, "sku": "Standard_ND96amsr_A100_v4",
                    "top": 2, "tokens": 1e11, "fidelity": "analytical"},
     ["plan", "train", "--model", "llama2-7b", "--gbs", "64", "--vms", "1", "--sku",
      "Standard_ND96amsr_A100_v4", "--top", "2", "--tokens", "1e11", "--fidelity", "analytical"]),
    ("sku-list", {}, ["sku", "list"]),
    # A slash that is a unit's, not a path's.
    ("fleet", {"sku": "ND96isr_H100_v5", "vms": 2, "model": "llama2-7b", "gbs": 64,
               "tokens": 1e10, "runs": 10, "checkpoint-to": "lustre", "storage-bw": "2 TB/s"},
     ["fleet", "--sku", "ND96isr_H100_v5", "--vms", "2", "--model", "llama2-7b", "--gbs", "64",
      "--tokens", "1e10", "--runs", "10", "--checkpoint-to", "lustre", "--storage-bw", "2 TB/s"]),
    ("model-show", {"name": "llama2-70b"}, ["model", "show", "llama2-70b"]),
]
for slug, body, args in SAME:
    status, text = post("/api/" + slug, body)
    check(status == 200, "%s: HTTP %d %s" % (slug, status, text[:200]))
    check(text == cli(args), "%s: the API's JSON differs from the CLI's" % slug)

# 2. Error paths: one line, HTTP 400 (404 for an unknown command), the CLI's message respelled.
ERRORS = [
    ("/api/topo", {"sku": "ND96amsr_A100_v4", "vms": 0}, 400, "'vms' must be in 1.."),
    ("/api/topo", {"bogus": 1}, 400, "unknown field 'bogus'"),
    # Binding errors name the field as the request spelled it, not the CLI's flag.
    ("/api/collective", {"sku": "ND96amsr_A100_v4", "min_bytes": [1]}, 400, "'min_bytes' takes"),
    ("/api/train", {"sku": "ND96amsr_A100_v4", "model": "llama2-7b", "gbs": 8, "tp": "x"}, 400,
     "'tp' takes an integer"),
    ("/api/train", {"sku": "ND96amsr_A100_v4", "model": "llama2-7b"}, 400, "'gbs' is required"),
    ("/api/collective", {"sku": "ND96amsr_A100_v4", "step_factor": 1}, 400, "'step_factor' must be"),
    ("/api/topo", {"vms": "two"}, 400, "vms"),
    ("/api/topo", b"[1, 2]", 400, "JSON object"),
    ("/api/topo", b"{not json", 400, "JSON object"),
    ("/api/train", {"trace": "/etc/passwd"}, 400, "local file"),
    ("/api/train", {"model-file": "m.yaml"}, 400, "local file"),
    ("/api/train", {"sku": "ND96amsr_A100_v4", "model": "/etc/passwd", "gbs": 8}, 400, "file path"),
    ("/api/train", {"sku": "ND96amsr_A100_v4", "model": "m.yaml", "gbs": 8}, 400, "file path"),
    ("/api/infer", {"sku": "ND96amsr_A100_v4", "model": "llama2-7b", "dataset": "/etc/passwd"},
     400, "file path"),
    ("/api/model-show", {"name": "../m.yaml"}, 400, "file path"),
    ("/api/topo", {"sku": "ND96amsr_A100_v4", "vms": 100000}, 400, "budget"),
    ("/api/infer", {"requests": 10 ** 7}, 400, "budget"),
    # --gpus sizes the cluster too (131072 GPUs: 16,384 VMs of 8, beyond the 4,096 VMs' budget).
    ("/api/plan-train", {"model": "llama2-7b", "gbs": 64, "gpus": 131072}, 400, "budget"),
    # ... and so does --gpus over a size's GPUs per VM: 8192 GPUs of NG8 (1 GPU per VM) are 8,192
    # VMs, beyond the 4,096 VMs' budget though within the 32,768 GPUs'.
    ("/api/plan-train", {"model": "llama2-7b", "gbs": 64, "gpus": 8192, "sku": "NG8"}, 400,
     "8192 VMs, beyond this server's per-request budget"),
    ("/api/plan-train", {"model": "llama2-7b", "gbs": 64, "gpus": 8192,
                         "skus": "ND96isr_H100_v5, NG8"}, 400, "budget"),
    ("/api/fleet", {"sku": "NG8", "gpus": 8192, "step-time": 4.0}, 400, "budget"),
    ("/api/topo", b"{" + b" " * 70000 + b"}", 400, "budget"),
    ("/api/train", {"sku": "nope", "model": "llama2-7b", "gbs": 8}, 400, "nope"),
    ("/api/no-such", {}, 404, "unknown command"),
]
for path, body, code, needle in ERRORS:
    status, text = post(path, body)
    try:
        err = json.loads(text)["error"]
    except (ValueError, KeyError):
        err = None
    check(status == code and err is not None and needle in err and "\n" not in err,
          "%s %r: HTTP %d %r" % (path, body[:40] if isinstance(body, bytes) else body, status, text[:200]))

# An API URL opened in a browser (GET) is 405 with Allow: POST and says how to call it (it was
# {"error": "HTTP 404"}); a path with no page names itself.
def get(path):
    try:
        with urllib.request.urlopen(BASE + path, timeout=60) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


for path, code, needle in [("/api/topo", 405, "use POST /api/topo with a JSON object"),
                           ("/report/train", 405, "use POST /report/train"),
                           ("/api/no-such", 404, "unknown command 'no-such'"),
                           ("/no-such-page", 404, "no GET /no-such-page (see GET /")]:
    status, headers, text = get(path)
    err = json.loads(text).get("error", "")
    check(status == code and needle in err and "\n" not in err,
          "GET %s: HTTP %d %r" % (path, status, text[:200]))
    if code == 405:
        check(headers.get("Allow") == "POST", "GET %s: Allow %r" % (path, headers.get("Allow")))

# 3. Load: 8 clients x 200 requests, mixed valid and invalid; each answer checked.
GOOD = cli(["topo", "--sku", "ND96amsr_A100_v4", "--vms", "4"])
lat, bad, lock = [], [], threading.Lock()


def client(k):
    for i in range(200):
        valid = (i + k) % 3 != 0
        body = {"sku": "ND96amsr_A100_v4", "vms": 4 if valid else 0}
        t0 = time.perf_counter()
        status, text = post("/api/topo", body)
        dt = time.perf_counter() - t0
        ok = (status == 200 and text == GOOD) if valid else (
            status == 400 and json.loads(text)["error"].startswith("'vms' must be in 1.."))
        with lock:
            lat.append(dt)
            if not ok:
                bad.append((k, i, status, text[:100]))


t0 = time.time()
threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
wall = time.time() - t0
lat.sort()
check(len(lat) == 1600 and not bad, "load: %d answers, %d wrong: %s" % (len(lat), len(bad), bad[:3]))
print("load: 1600 requests (8 clients x 200, 1/3 invalid) in %.1f s: p50 %.1f ms, p99 %.1f ms"
      % (wall, 1000 * lat[len(lat) // 2], 1000 * lat[int(len(lat) * 0.99)]))

# 4. The browser: fill the training form, submit, compare the page's numbers with the CLI's JSON.
from browser import chromium  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

driver = chromium(offline=False)  # only loopback resolves: the server
try:
    driver.get(BASE + "/")
    check("train" in driver.page_source, "index page lacks train")
    driver.get(BASE + "/cmd/train")
    form = {"sku": "Standard_ND96isr_H100_v5", "vms": "2", "model": "llama2-7b", "gbs": "64",
            "tp": "2", "pp": "4"}
    for name, value in form.items():
        driver.find_element(By.ID, "f-" + name).send_keys(value)
    driver.find_element(By.ID, "run").click()
    deadline = time.time() + 60
    while time.time() < deadline and driver.execute_script(
            "return document.body.getAttribute('data-done')") is None:
        time.sleep(0.1)
    check(driver.execute_script("return document.body.getAttribute('data-done')") == "ok",
          "the train form did not produce a result: %s" % driver.find_element(By.ID, "error").text)
    frame = driver.find_element(By.ID, "result")
    driver.switch_to.frame(frame)
    deadline = time.time() + 30
    while time.time() < deadline and driver.execute_script(
            "return document.body.getAttribute('data-charts-done')") != "true":
        time.sleep(0.1)
    # The form's report flags are on by default: the page ran with --timeline.
    want = json.loads(cli(["train", "--sku", "Standard_ND96isr_H100_v5", "--vms", "2", "--model",
                           "llama2-7b", "--gbs", "64", "--tp", "2", "--pp", "4", "--timeline"]))
    got = json.loads(driver.execute_script("return document.getElementById('ndt-doc').textContent"))
    check(got == want, "the page's JSON differs from the CLI's")
    # The numbers shown in the results table are the CLI's values.
    for key in ("step_time_s", "mfu", "tokens_per_s", "gpus"):
        shown = driver.execute_script(
            "var td = document.querySelector('#results td[data-key=\"%s\"] .num');"
            "return td ? td.getAttribute('data-json') : null;" % key)
        check(shown is not None and float(shown) == float(want[key]),
              "train page %s: %r, CLI %r" % (key, shown, want[key]))
    charts = driver.execute_script("""return Array.from(document.querySelectorAll('.vl')).map(
        function (el) { var s = el.querySelector('svg');
          return el.getAttribute('data-rendered') === 'true' && s && s.querySelectorAll('path, rect').length > 2; });""")
    check(len(charts) == 3 and all(charts), "train page charts: %s" % charts)
    check(want["timeline"]["mode"] == "spans" and len(want["timeline"]["rows"]) > 10,
          "train timeline: %s" % {k: v for k, v in want["timeline"].items() if k != "rows"})
    driver.switch_to.default_content()
    driver.save_screenshot(os.path.join(OUT, "serve_train_form.png"))
    driver.execute_script("document.getElementById('dl-json').scrollIntoView()")
    driver.save_screenshot(os.path.join(OUT, "serve_train.png"))
    driver.switch_to.frame(frame)  # the Gantt of the step (docs/serve_train_timeline.png)
    driver.execute_script("document.querySelectorAll('.chart')[2].scrollIntoView()")
    driver.save_screenshot(os.path.join(OUT, "serve_train_timeline.png"))
    driver.switch_to.default_content()
    # The area pages: each holds its commands' forms; run one form per new chart.
    AREAS = {"catalog": 4, "cluster": 1, "collectives": 1, "training": 1, "inference": 1,
             "planners": 2, "hpc": 1}
    for area, forms in AREAS.items():
        driver.get(BASE + "/area/" + area)
        n = driver.execute_script("return document.querySelectorAll('form.ndt-form').length")
        check(n == forms, "area %s: %s forms, want %d" % (area, n, forms))
    RUNS = [("inference", "infer", {"sku": "Standard_ND96isr_H100_v5", "model": "llama2-70b",
                                    "scenario": "server", "qps": "5", "tp": "4",
                                    "requests": "200"}, 5),
            ("planners", "plan-train", {"model": "llama2-7b", "gbs": "64", "vms": "1",
                                        "sku": "Standard_ND96amsr_A100_v4", "top": "3",
                                        "tokens": "1e11", "fidelity": "analytical"}, 1)]
    for area, slug, form, want_charts in RUNS:
        driver.get(BASE + "/area/" + area)
        for name, value in form.items():
            driver.find_element(By.ID, slug + "-f-" + name).send_keys(value)
        driver.find_element(By.ID, slug + "-run").click()
        deadline = time.time() + 60
        while time.time() < deadline and driver.execute_script(
                "return document.getElementById(arguments[0]).getAttribute('data-done')",
                slug + "-section") is None:
            time.sleep(0.1)
        driver.switch_to.frame(driver.find_element(By.ID, slug + "-result"))
        deadline = time.time() + 30
        while time.time() < deadline and driver.execute_script(
                "return document.body.getAttribute('data-charts-done')") != "true":
            time.sleep(0.1)
        charts = driver.execute_script("""return Array.from(document.querySelectorAll('.vl')).map(
            function (el) { var s = el.querySelector('svg');
              return el.getAttribute('data-rendered') === 'true' && s && s.querySelectorAll('path, rect').length > 2; });""")
        check(len(charts) == want_charts and all(charts), "%s form charts: %s" % (slug, charts))
        driver.switch_to.default_content()
        driver.execute_script("document.getElementById(arguments[0]).scrollIntoView()",
                              slug + "-result")
        driver.save_screenshot(os.path.join(OUT, "serve_%s.png" % area))
finally:
    driver.quit()

# 5. A full queue answers 503 at once: 1 thread, 1 waiting, 8 concurrent slow requests.
PORT2 = free_port()
small = subprocess.Popen([NDTWIN, "serve", "--port", str(PORT2), "--threads", "1", "--queue", "1"],
                         stderr=subprocess.PIPE, text=True)
atexit.register(lambda: small.poll() is None and small.kill())
small.stderr.readline()
SLOW = {"sku": "Standard_ND96isr_H100_v5", "model": "llama2-70b", "scenario": "server", "qps": 5,
        "tp": 4, "requests": 10000}
answers, alock = [], threading.Lock()


def slow_client():
    data = json.dumps(SLOW).encode()
    req = urllib.request.Request("http://127.0.0.1:%d/api/infer" % PORT2, data=data, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            got = (r.status, r.read().decode())
    except urllib.error.HTTPError as e:
        got = (e.code, e.read().decode())
    with alock:
        answers.append(got)


t0 = time.time()
clients = [threading.Thread(target=slow_client) for _ in range(8)]
for t in clients:
    t.start()
for t in clients:
    t.join()
codes = sorted(code for code, _ in answers)
busy = [json.loads(text)["error"] for code, text in answers if code == 503]
check(len(answers) == 8 and set(codes) <= {200, 503} and codes.count(200) >= 2 and len(busy) >= 1
      and all(b.startswith("server busy") and "\n" not in b for b in busy),
      "queue: codes %s, errors %s" % (codes, busy[:1]))
print("queue: 8 concurrent requests on 1 thread + 1 waiting: %d answered, %d refused 503 (%.1f s)"
      % (codes.count(200), len(busy), time.time() - t0))
small.send_signal(signal.SIGINT)
small.wait(timeout=10)

# 6. Ctrl-C stops it cleanly.
server.send_signal(signal.SIGINT)
try:
    rc = server.wait(timeout=10)
except subprocess.TimeoutExpired:
    server.kill()
    rc = None
check(rc == 0, "serve after SIGINT: exit %s" % rc)
for f in failures:
    print("FAIL:", f)
print("serve: %d failures" % len(failures))
sys.exit(1 if failures else 0)
