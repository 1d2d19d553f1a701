#!/usr/bin/python3
"""Prints the README's "From Python" session from a real run of the built module, so the numbers
shown there stay true (called by scripts/readme_tour.sh; PYTHONPATH must reach build/python)."""
import sys

import ndtwin

# (source lines as typed, evaluate?) in order; a statement is executed, an expression's repr shown.
SESSION = [
    'import ndtwin',
    'r = ndtwin.train(model="llama2-70b", sku="ND96isr_H100_v5", vms=8, gbs=512, tp=8, pp=2)',
    'r',
    'r.mfu, r.memory.peak_bytes_per_gpu / 2**30',
    'plan = ndtwin.plan_train(model="llama2-70b", gbs=1024, gpus=512, tokens=2e12, top=3,\n'
    '                         skus="ND96isr_H100_v5,ND96amsr_A100_v4", fidelity="analytical")',
    'plan.to_frame()[["rank", "sku", "vms", "tp", "pp", "dp", "step_time_s", "mfu", "cost_usd"]]',
    'ndtwin.collective(sku="ND96isr_H100_v5", min_bytes="1G", max_bytes="1M")',
]


def main():
    try:  # a wide terminal's view of a frame, so the README shows every column asked for
        import pandas

        pandas.set_option("display.width", 160)
        pandas.set_option("display.max_columns", None)
    except ImportError:
        pass
    env = {"ndtwin": ndtwin}
    print("$ PYTHONPATH=build/python python3")
    for src in SESSION:
        lines = src.split("\n")
        print(">>> " + lines[0])
        for more in lines[1:]:
            print("... " + more)
        try:
            code = compile(src, "<readme>", "eval")
        except SyntaxError:
            exec(compile(src, "<readme>", "exec"), env)
            continue
        try:
            value = eval(code, env)
        except ndtwin.Error as e:
            print("Traceback (most recent call last):\n  ...")
            print(f"ndtwin.Error: {e}")
            continue
        if value is not None:
            print(repr(value))
    return 0


if __name__ == "__main__":
    sys.exit(main())
