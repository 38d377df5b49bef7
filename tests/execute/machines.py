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
# An EPYC VM (2 vCPUs, 1 MiB L2 each) whose two cores write as if under last levels of their own:
# one thread's edge at 8 MiB, two threads' at 16, its last level no dearer to read than L2, the
# copy kernel's worker sharing steps. The figures one of its calibrations measured, rounded.
EPYC = replace(
    BENCH,
    l2_bytes=1 << 20,
    llc_bytes=8 << 20,
    llc2_bytes=16 << 20,
    far_src_ns=0.0,
    byte_l2_ns=0.02,
    byte_llc_ns=0.028,
    byte_mem_ns=0.059,
    byte_llc2_ns=0.0135,
    byte_mem2_ns=0.037,
    byte_near2_ns=0.0138,
    byte_small2_ns=0.0083,
    moved_ns=0.11,
    share_ns=350.0,
    kernel_shares=True,
    kernel_byte_ns=0.036,
    kernel_byte2_ns=0.0355,
    kernel_bounce_ns=0.048,
    kernel_bounce2_ns=0.0096,
    kernel_run_ns=3.2,
    kernel_line_ns=1.5,
    kernel_copy_ns=0.55,
    kernel_calibrated=True,
    calibrated=True,
)
