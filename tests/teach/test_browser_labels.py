"""Labels fit their cells at any byte offset: the explanation page of descriptors whose buffers reach
large offsets, opened in a real headless Chromium, every label's box measured against its cell's.

Skipped, with the reason, when selenium, chromium or chromedriver is missing (`make browser`
installs them)."""

from __future__ import annotations

import pytest

import dmltile
from dmltile.teach.html import explanation_page
from tests.teach.browser_support import headless_chromium, needs_chromium
from tests.teach.test_picture import desc_with

pytestmark = needs_chromium

# For every strip slot and grid cell: the boxes of its label's text that stick out of the cell.
MEASURE = """
const out = [];
for (const cell of document.querySelectorAll('.dmltile .seg, .dmltile td.cell')) {
  const box = cell.getBoundingClientRect();
  const range = document.createRange();
  range.selectNodeContents(cell);
  for (const r of range.getClientRects()) {
    if (r.width === 0) continue;
    if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5)
      out.push([cell.textContent, box.left, box.right, box.top, box.bottom, r.left, r.right, r.top, r.bottom]);
  }
}
return [document.querySelectorAll('.dmltile .seg').length, out];
"""


@pytest.fixture(scope="module")
def browser():
    driver = headless_chromium(1000, 1300)
    yield driver
    driver.quit()


@pytest.mark.parametrize(
    "desc",
    [
        dmltile.tile_desc([1, 2], [1, 100000], dtype="INT8"),  # offsets up to 199,999
        dmltile.tile_desc([3, 7], [4000, 3], dtype="FLOAT64"),  # offsets in the millions
        desc_with([1, 2], [2, 2], out_strides=[1, 1], dtype="INT8"),  # shared slots: "?" and ×2
        desc_with([2, 3], [1, 1], in_strides=[3000000, 1000000], dtype="FLOAT32"),  # far-apart slots
    ],
    ids=["int8-200k", "float64-millions", "shared", "sparse"],
)
@pytest.mark.parametrize("window_width", [1000, 360])
def test_every_label_fits_its_cell(browser, tmp_path, desc, window_width):
    browser.set_window_size(window_width, 1300)
    page = tmp_path / "page.html"
    page.write_text(explanation_page(dmltile.explain(desc)))
    browser.get(page.as_uri())
    segments, outside = browser.execute_script(MEASURE)
    assert segments > 0
    assert outside == []
