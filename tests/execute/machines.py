"""Cost models built in the tests, so that no test's verdict depends on the machine that runs it.

The planner prices copies with figures measured on the machine (cache sizes, per-byte rates, the
cost of a second thread). A test that asserts which plan is chosen plans with one of these instead:
every rate is the constant measured once on the project's bench machine (CopyCosts' defaults), and
the cache sizes are written here.
"""

from __future__ import annotations

from dataclasses import replace

from dmltile.execute.costs import CopyCosts

BENCH = CopyCosts(l2_bytes=512 << 10, llc_bytes=32 << 20)
# The same machine with NumPy's copies only: the copy kernel priced out even when it is loaded.
BENCH_NUMPY_ONLY = replace(BENCH, kernel_byte_ns=float("inf"), kernel_byte2_ns=float("inf"))
