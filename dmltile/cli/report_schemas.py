"""The JSON Schemas of what ``--json`` prints, shipped in ``dmltile/cli/schemas/``.

Every command with ``--json`` prints one document that validates against its schema here, or,
when the command cannot run (a usage error, unreadable input), the ``error`` schema's document.
"""

from __future__ import annotations

import json
from importlib import resources

REPORTS = ("validate", "check", "levels", "rules", "run", "doctor", "compare-dxdispatch", "error")


def report_schema(name: str) -> dict:
    """The JSON Schema of ``dmltile NAME --json`` (``error``: the document of a failed run)."""
    if name not in REPORTS:
        raise ValueError(f"no report schema {name!r}; there are {', '.join(REPORTS)}")
    text = (
        resources.files("dmltile")
        .joinpath("cli/schemas/" + f"{name}.schema.json")
        .read_text(encoding="utf-8")
    )
    return json.loads(text)
