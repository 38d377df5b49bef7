"""Growth tests: whether work stays linear in the input, measured as a ratio of two times on the same
machine (never an absolute time): the time at twice the input over the time at the input. The time
is the process's CPU time, which other processes' load on a shared machine does not add to."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

LINEAR = 2.5  # the most a linear entry point's time may grow when its input doubles (quadratic: 4)


def best_time(work: Callable[[], Any], runs: int = 5, repeat: int = 1) -> float:
    """The least of ``runs`` timings of ``repeat`` calls of ``work()`` (the least is the least
    disturbed by other load)."""
    times = []
    for _ in range(runs):
        start = time.process_time()
        for _ in range(repeat):
            work()
        times.append(time.process_time() - start)
    return min(times)


def growth(run: Callable[[Any], Any], make: Callable[[int], Any], n: int, floor: float = 0.05) -> float:
    """How many times longer ``run`` takes on ``make(2 * n)`` than on ``make(n)``: each timing of as
    many calls as take ``floor`` seconds on the smaller input (one call's timing is mostly noise).

    Other load only ever adds time to a timing, so a ratio over LINEAR is measured again (three
    times at most) and the least kept: a linear entry point's least ratio is near 2, a quadratic
    one's never under 4."""
    small, large = make(n), make(2 * n)
    repeat = 1
    while best_time(lambda: run(small), 1, repeat) < floor and repeat < 1 << 12:
        repeat *= 2  # also warms caches and imports before the timings that count

    def time_of(argument: Any) -> float:
        return best_time(lambda: run(argument), 1, repeat)

    ratios = []
    for _ in range(3):
        # Interleaved, so that other load on the machine slows both alike; the least of each.
        rounds = [(time_of(small), time_of(large)) for _ in range(7)]
        ratios.append(min(t for _, t in rounds) / min(t for t, _ in rounds))
        if ratios[-1] <= LINEAR:
            break
    return min(ratios)
