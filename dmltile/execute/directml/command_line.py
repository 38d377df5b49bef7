"""The driver's small command line, used by ``setup.sh`` and for manual runs::

python standalone.py record-versions [--force] | versions | problem | run VERSION < cases.jsonl
"""

from __future__ import annotations

import json
import sys
import time

from .batch import run_cases
from .installation import setup_problem
from .version_table import list_versions, record_versions

USAGE = "usage: standalone.py record-versions [--force] | versions | problem | run VERSION < cases.jsonl"


def _record_versions(force: bool) -> None:
    t0 = time.monotonic()
    for r in record_versions(force=force):
        print(f"  {r['wheel']:<44}  DirectML {r['file_version']:<14}  max level {r['max_feature_level']}")
    print(f"  ({time.monotonic() - t0:.1f} s)")


def _run(version: str) -> None:
    cases = [json.loads(line) for line in sys.stdin if line.strip()]
    for a in run_cases(cases, version):
        for key in ("output", "output_buffer"):
            if isinstance(a.get(key), bytes):
                a[key] = a[key].hex()
        print(json.dumps(a))


def main(argv: list[str] | None = None) -> int:
    """Run one command; the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if args else 2
    if args[0] == "problem":
        print(setup_problem() or "ready")
    elif args[0] == "record-versions":
        _record_versions("--force" in args)
    elif args[0] == "versions":
        print(json.dumps(list_versions(), indent=1))
    elif args[0] == "run" and len(args) == 2:
        _run(args[1])
    else:
        print(f"unknown command: {' '.join(args)}", file=sys.stderr)
        return 2
    return 0
