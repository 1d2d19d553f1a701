"""The Python door's overhead on a train call (BENCHMARKS.md): ndtwin.train(...) timed with
timeit against the same call on the C++ side alone (ndtwin._core.time_call: parse the options,
RunJson, dump the JSON, with no Python in the loop).

    PYTHONPATH=build/python /usr/bin/python3 bench/python_overhead.py
"""

import json
import statistics
import sys
import timeit

import ndtwin
from ndtwin import _core

CASES = {
    "train llama2-7b 2x A100 tp2": dict(sku="Standard_ND96amsr_A100_v4", vms=2,
                                         model="llama2-7b", gbs=64, tp=2),
    "train gpt3-175b 128x A100": dict(sku="Standard_ND96amsr_A100_v4", vms=128,
                                      model="gpt3-175b", gbs=1536, tp=8, pp=8, vpp=12, mbs=1,
                                      recompute="full"),
}


def main(rounds=7, number=None):
    print("%-30s %12s %12s %9s" % ("case", "C++ (ms)", "Python (ms)", "overhead"))
    for name, kwargs in CASES.items():
        args = json.dumps({k.replace("_", "-"): v for k, v in kwargs.items()})
        ndtwin.train(**kwargs)  # loads the Context
        one = _core.time_call("train", args, "", 3)
        n = number or max(3, int(0.3 / one))
        cpp, py = [], []
        for _ in range(rounds):  # interleaved, so that load on the machine hits both alike
            cpp.append(_core.time_call("train", args, "", n))
            py.append(timeit.timeit(lambda: ndtwin.train(**kwargs), number=n) / n)
        c, p = statistics.median(cpp), statistics.median(py)
        print("%-30s %12.3f %12.3f %8.1f%%" % (name, c * 1e3, p * 1e3, 100 * (p - c) / c))
    return 0


if __name__ == "__main__":
    sys.exit(main())
