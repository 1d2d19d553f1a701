"""The Python door's overhead on a train call (BENCHMARKS.md).

Three timings per case, each the minimum over rounds of the mean of n calls (the minimum is the
robust figure on a shared machine, where other work only adds time), in CPU seconds of this
process (time.process_time: what other processes do on the machine does not count):
  C++      ndtwin._core.time_call: the C++ side alone (parse the options, RunJson, dump the
           JSON), n calls in a C++ loop, no Python in it;
  Python   ndtwin.train(**kwargs): the whole call from Python (keywords -> JSON, the pybind11
           call with the GIL released, the Result);
  layer    ndtwin.train(**kwargs) with the core call replaced by one that returns its answer at
           once: the Python door's own work per call, without the noise of the command.
Overhead = (Python - C++) / C++, and layer / C++.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py

Instruction counts (load-independent; the figure BENCHMARKS.md reports): run under callgrind
`--calls MODE N CASE` (MODE cpp: N calls of time_call in C++; py: N calls of ndtwin.train) and
take (Ir(MODE, N) - Ir(cpp, 0)) / N per call:
    PYTHONPATH=build/python valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        /usr/bin/python3 bench/python_overhead.py --calls py 200 0
"""

import json
import sys
import time

import ndtwin
from ndtwin import _api, _core

CASES = {
    "llama2-7b, 2 ND A100 v4, tp2": dict(sku="Standard_ND96amsr_A100_v4", vms=2,
                                         model="llama2-7b", gbs=64, tp=2),
    "llama3-70b, 8 ND H100 v5": dict(sku="Standard_ND96isr_H100_v5", vms=8,
                                     model="llama3-70b", gbs=512, tp=8, pp=2),
    "gpt3-175b, 128 ND A100 v4": dict(sku="Standard_ND96amsr_A100_v4", vms=128,
                                      model="gpt3-175b", gbs=1536, tp=8, pp=8, vpp=12, mbs=1,
                                      recompute="full"),
}


def cpu_per_call(fn, n):
    t = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t) / n


def main(rounds=9):
    print("%-30s %10s %12s %9s %10s %8s" % ("train case", "C++ (ms)", "Python (ms)", "overhead",
                                            "layer (us)", "layer %"))
    for name, kwargs in CASES.items():
        args = json.dumps({k.replace("_", "-"): v for k, v in kwargs.items()})
        answer = _core.call("train", args, "")  # also loads the Context
        assert answer[0] == "ok", answer
        one = _core.time_call("train", args, "", 3)
        n = max(5, int(0.2 / one))
        cpp, py, layer = [], [], []
        real_call = _api._core.call
        for _ in range(rounds):  # interleaved: load on the machine hits each alike
            t = time.process_time()
            _core.time_call("train", args, "", n)
            cpp.append((time.process_time() - t) / n)
            py.append(cpu_per_call(lambda: ndtwin.train(**kwargs), n))
            _api._core.call = lambda *a: answer
            try:
                layer.append(cpu_per_call(lambda: ndtwin.train(**kwargs), max(n, 2000)))
            finally:
                _api._core.call = real_call
        c, p, l = min(cpp), min(py), min(layer)
        print("%-30s %10.3f %12.3f %8.1f%% %10.1f %7.1f%%" % (
            name, c * 1e3, p * 1e3, 100 * (p - c) / c, l * 1e6, 100 * l / c))
    return 0


def calls(mode, n, case):
    kwargs = list(CASES.values())[case]
    args = json.dumps({k.replace("_", "-"): v for k, v in kwargs.items()})
    assert _core.call("train", args, "")[0] == "ok"  # loads the Context in every mode
    if mode == "cpp" and n:
        _core.time_call("train", args, "", n)
    elif mode == "py":
        for _ in range(n):
            ndtwin.train(**kwargs)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--calls":
        sys.exit(calls(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
    sys.exit(main())
