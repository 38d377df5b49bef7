"""The data tables shipped with dmltile (``feature_levels/``): the levels, Tile's support rows and
the measured DirectML versions as TOML, DML_OPERATOR_TYPE as a list of names.

The folder is the project's top-level ``feature_levels/``, which the package reaches as
``dmltile/feature_levels`` (a link in the source tree, a real folder inside the wheel).
"""

from __future__ import annotations

import sys
from importlib import resources
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    # tomli is a dependency on 3.10 only, so a checker targeting 3.10 from a newer Python may not
    # find it (hence unused-ignore: where it is installed the ignore is unused).
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]


def read_text(name: str) -> str:
    """One file of ``feature_levels/`` as text."""
    return resources.files("dmltile").joinpath("feature_levels").joinpath(name).read_text(encoding="utf-8")


def read_table(name: str) -> dict[str, Any]:
    """One TOML table of ``feature_levels/``, parsed."""
    return tomllib.loads(read_text(name))
