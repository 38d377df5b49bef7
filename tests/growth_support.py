"""Growth tests: whether work stays linear in the input, measured as a ratio of two times on the same
machine (never an absolute time): the time at twice the input over the time at the input."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

LINEAR = 2.5  # the most a linear entry point's time may grow when its input doubles (quadratic: 4)


def best_time(work: Callable[[], Any], runs: int = 3) -> float:
    """The least of ``runs`` timings of ``work()`` (the least is the least disturbed by other load)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def growth(run: Callable[[Any], Any], make: Callable[[int], Any], n: int) -> float:
    """How many times longer ``run`` takes on ``make(2 * n)`` than on ``make(n)`` (inputs made first)."""
    small, large = make(n), make(2 * n)
    run(small)  # warm caches and imports, so the first timing measures the work alone
    return best_time(lambda: run(large)) / best_time(lambda: run(small))
