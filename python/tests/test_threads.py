"""Calls from several Python threads: the same answers as one at a time."""

import threading

import ndtwin

A100 = "Standard_ND96amsr_A100_v4"
H100 = "Standard_ND96isr_H100_v5"


def test_threads_calling_train_agree():
    calls = [
        dict(sku=A100, vms=2, model="llama2-7b", gbs=64, tp=2),
        dict(sku=H100, vms=4, model="llama2-13b", gbs=128, tp=4, pp=2),
        dict(sku=A100, vms=1, model="gpt3-1.3b", gbs=32),
    ]
    serial = [ndtwin.train(**c).to_json() for c in calls]
    got = {}
    errors = []

    def work(i):
        try:
            got[i] = ndtwin.train(**calls[i % len(calls)]).to_json()
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, text in got.items():
        assert text == serial[i % len(calls)]
    assert len(got) == 12


def test_gil_is_released_during_a_call():
    # While one thread runs a long call, another thread keeps running Python.
    ticks = []
    done = threading.Event()

    def long_call():
        ndtwin.plan_train(model="llama2-7b", gbs=64, vms=1, top=3, fidelity="analytical",
                          threads=1)
        done.set()

    t = threading.Thread(target=long_call)
    t.start()
    while not done.is_set():
        ticks.append(1)
        done.wait(0.001)
    t.join()
    assert len(ticks) > 5
