"""docs/tile-semantics.md is what docs/gen_semantics.py prints now: every example runs and shows its output."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_semantics", DOCS / "gen_semantics.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_page_is_up_to_date():
    gen = _generator()
    assert (DOCS / "tile-semantics.md").read_text() == gen.render(), "run: python docs/gen_semantics.py"


def test_every_row_has_runnable_examples_that_do_not_crash():
    gen = _generator()
    for row in gen.ROWS:
        assert row.examples, row.topic
        for code in row.examples:
            text = gen.run_example(code)  # a DmlTileError is shown as text; anything else fails here
            assert text and "Traceback" not in text
