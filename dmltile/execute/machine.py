"""The machine figures the copy cost model depends on: L2 and last-level cache sizes and the core count.

They are read from the operating system (sysfs on Linux, ``os.cpu_count()``); calibration then
measures where a copy's rate actually changes and lowers the cache sizes to it (``costs.measured_caches``:
a VM may report its host's whole last level). They can be replaced for a whole
run by ``DMLTILE_MACHINE``, e.g. ``DMLTILE_MACHINE="llc=2MiB"`` or ``"l2=256KiB,llc=1GiB,cpus=1"``.
The knob exists so that the tests can be run as if on another machine: a planner whose prices
depend on the cache size must give right answers whatever that size is, and a test suite that only
ever meets one machine's figures cannot show it. A faked run calibrates under its own key (see
``costs.cache_file``), so it never reuses, nor overwrites, the real machine's measurements.
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import DmlTileError

ENV = "DMLTILE_MACHINE"
FALLBACK_L2 = 512 << 10  # what a machine that does not say is taken to have
FALLBACK_LLC = 32 << 20
UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20, "MB": 1 << 20}
UNITS |= {"MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30}


@dataclass(frozen=True)
class Machine:
    """What the cost model knows of the hardware; ``fake`` is the DMLTILE_MACHINE text that set it."""

    l2_bytes: int = FALLBACK_L2
    llc_bytes: int = FALLBACK_LLC
    cpus: int = 1
    fake: str = ""


def this_machine() -> Machine:
    """The figures of the machine this process runs on, with DMLTILE_MACHINE's replacements applied."""
    l2, llc = _cache_sizes()
    real = Machine(l2, llc, os.cpu_count() or 1)
    text = os.environ.get(ENV, "").strip()
    return faked(real, text) if text else real


def faked(real: Machine, text: str) -> Machine:
    """``real`` with the figures ``text`` names (``l2=``, ``llc=``, ``cpus=``, separated by commas)."""
    figures = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, _, value = (s.strip() for s in item.partition("="))
        if key not in ("l2", "llc", "cpus"):
            raise DmlTileError(f"{ENV}: unknown figure {key!r} in {text!r}; known: l2, llc, cpus")
        figures[key] = _count(value, key, text)
    llc = figures.get("llc", real.llc_bytes)
    # The last level is the largest: a faked small one takes L2 down with it unless L2 is given too.
    l2 = figures.get("l2", min(real.l2_bytes, llc))
    if l2 > llc:
        raise DmlTileError(
            f"{ENV}: l2={l2} is larger than llc={llc} in {text!r}; the last level is the largest"
        )
    fake = ",".join(f"{k}={v}" for k, v in sorted(figures.items()))
    return Machine(l2, llc, figures.get("cpus", real.cpus), fake)


def _count(value: str, key: str, text: str) -> int:
    """A positive whole number with an optional binary unit (``2MiB``, ``512K``, ``1G``)."""
    match = re.fullmatch(r"(\d+)\s*([A-Za-z]*)", value)
    unit = match and UNITS.get(match[2].upper())
    if not match or unit is None or int(match[1]) <= 0 or (key == "cpus" and match[2]):
        raise DmlTileError(
            f"{ENV}: {key}={value!r} in {text!r} is not a positive "
            + ("whole number" if key == "cpus" else "size such as 2MiB, 512KiB or 1GiB")
        )
    return int(match[1]) * unit


def _cache_sizes() -> tuple[int, int]:
    """(L2 per core, last-level cache) in bytes from sysfs, else the fallbacks."""
    sizes = {}
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    try:
        for index in base.glob("index*"):
            if (index / "type").read_text().strip() == "Instruction":
                continue
            level = int((index / "level").read_text())
            text = (index / "size").read_text().strip().upper()
            mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
            sizes[level] = int(text.rstrip("KMG")) * mult
    except (OSError, ValueError):
        pass
    return sizes.get(2, FALLBACK_L2), max(sizes.values()) if sizes else FALLBACK_LLC


def cpu_model() -> str:
    """The processor's name (the calibration is kept per processor)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"
