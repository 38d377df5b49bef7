"""The shipped example descriptors and the feature level each one's name promises."""

import re
from pathlib import Path

import dmltile

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def example_level(path: Path) -> str:
    """The level an example is named for (``valid_fl2_1_...`` -> ``2.1``), else the default level."""
    match = re.match(r"(?:in)?valid_fl(\d)_(\d)_", path.name)
    return f"{match[1]}.{match[2]}" if match else dmltile.DEFAULT_FEATURE_LEVEL
