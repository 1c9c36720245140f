"""The language model's calls pass `progress` only to functions that take it, deciding once per function."""

from __future__ import annotations

import functools
import gc
import inspect

from embviz.core.lm import process


def with_progress(model, x, progress=None):
    return ("with", x, progress is not None)


def without_progress(model, x):
    return ("without", x)


def test_progress_goes_only_to_functions_that_take_it():
    report = lambda *a: None  # noqa: E731
    assert process._run(with_progress, None, (1,), {}, report) == ("with", 1, True)
    assert process._run(without_progress, None, (2,), {}, report) == ("without", 2)
    assert process._run(functools.partial(without_progress, x=3), None, (), {}, report) == ("without", 3)
    assert process.takes_progress(len) is False  # a builtin without a readable signature never gets it


def test_a_signature_is_read_once_per_function(monkeypatch):
    reads = []
    real = inspect.signature

    def counting(fn, *a, **k):
        reads.append(fn)
        return real(fn, *a, **k)

    monkeypatch.setattr(inspect, "signature", counting)

    def fresh(model, progress=None):
        return progress is not None

    for _ in range(5):
        assert process._run(fresh, None, (), {}, lambda *a: None) is True
        assert process._run(without_progress, None, (0,), {}, lambda *a: None) == ("without", 0)
    assert reads.count(fresh) == 1 and reads.count(without_progress) <= 1


def test_a_function_passed_once_is_not_kept_alive():
    def closure(model):
        return model

    process.takes_progress(closure)
    size = len(process._TAKES_PROGRESS)
    del closure
    gc.collect()
    assert len(process._TAKES_PROGRESS) == size - 1
