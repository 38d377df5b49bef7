"""The HTML page and the playground in a real headless browser: Debian's Chromium driven by Selenium.

Skipped, with the reason, when selenium, chromium or chromedriver is missing (`make browser`
installs them). Every expectation is computed here from the descriptor (mod arithmetic and
``np.ravel_multi_index`` over its strides), not read from dmltile. Screenshots go to
``$DMLTILE_SCREENSHOT_DIR`` (``make browser`` sets ``docs/``) or to the test's tmp folder, and the
test looks at them: it decodes the PNG of a hovered cell and checks the highlight is drawn. Every
playground exercise is done here too, with a wrong answer and the right one.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

from dmltile.teach.exercises import EXERCISES
from tests.cli_support import DOC_EXAMPLE, EXAMPLES, SCRIPT, invoke
from tests.teach.browser_support import (
    ActionChains,
    By,
    Select,
    WebDriverWait,
    headless_chromium,
    needs_chromium,
)

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser():
    driver = headless_chromium(1280, 1300)
    yield driver
    driver.quit()


def shot_path(tmp_path: Path, name: str) -> Path:
    folder = os.environ.get("DMLTILE_SCREENSHOT_DIR")
    return (Path(folder) if folder else tmp_path) / name


def png_pixels(data: bytes) -> np.ndarray:
    """Decode an 8-bit RGB/RGBA, non-interlaced PNG (what Chromium writes) into an HxWxC array."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, 1 + width * channels)
    out = np.zeros((height, width * channels), dtype=np.int32)
    for y in range(height):
        f, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        up = out[y - 1] if y else np.zeros_like(line)
        if f == 0:
            out[y] = line
        elif f == 2:
            out[y] = (line + up) % 256
        else:  # Sub, Average, Paeth need the pixel to the left: byte by byte
            row = np.zeros_like(line)
            for x in range(line.size):
                a = row[x - channels] if x >= channels else 0
                b, c = up[x], (up[x - channels] if x >= channels else 0)
                if f == 1:
                    pred = a
                elif f == 3:
                    pred = (a + b) // 2
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                row[x] = (line[x] + pred) % 256
            out[y] = row
    return out.reshape(height, width, channels)[:, :, :3]


def has_colour(pixels: np.ndarray, rgb: tuple[int, int, int], tolerance: int = 40) -> bool:
    return bool((np.abs(pixels - np.array(rgb)).sum(axis=2) <= tolerance).any())


def hex_rgb(value: str) -> tuple[int, int, int]:
    return tuple(int(value[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def hover(driver, element) -> None:
    ActionChains(driver).move_to_element(element).perform()


def attrs(driver, selector: str, name: str) -> list[str]:
    return [e.get_attribute(name) for e in driver.find_elements(By.CSS_SELECTOR, selector)]


def _document(path: Path) -> tuple[list[int], list[int], list[int], list[int] | None, list[int] | None]:
    d = json.loads(path.read_text())["Desc"]
    i, o = d["InputTensor"]["Desc"], d["OutputTensor"]["Desc"]
    return i["Sizes"], o["Sizes"], d["Repeats"], i["Strides"], o["Strides"]


def _byte(index, sizes, strides, elem=4) -> int:
    if strides is None:
        return int(np.ravel_multi_index(index, sizes)) * elem
    return sum(a * s for a, s in zip(index, strides, strict=True)) * elem


@pytest.mark.parametrize(
    "example, hovered",
    [
        (DOC_EXAMPLE, [(0, 0, 3, 5), (0, 0, 5, 8), (0, 0, 2, 3)]),
        (EXAMPLES / "valid_strided_padded_input.json", [(0, 1, 3, 5), (0, 0, 2, 4), (0, 0, 3, 5)]),
    ],
    ids=["doc_example", "strided_padded_input"],
)
def test_html_page_hover_highlights_the_source_element_and_both_bytes(browser, tmp_path, example, hovered):
    page = tmp_path / "tile.html"
    result = invoke("explain", example, "--html", page)
    assert result.exit_code == 0, result.stderr
    text = page.read_text()
    assert (
        "<script src" not in text
        and "<link" not in text
        and "://" not in text.replace("http://www.w3.org", "")
    )
    ins, outs, _reps, in_strides, out_strides = _document(example)
    browser.get(page.as_uri())
    for out in hovered:
        name = ",".join(map(str, out))
        src = tuple(o % s for o, s in zip(out, ins, strict=True))  # Tile: input[o_k mod Sizes[k]]
        in_grid = browser.find_elements(By.CSS_SELECTOR, f'.grid-output [data-out="{name}"]')
        # an element off the drawn slice is hovered in the output buffer's strip instead
        target = in_grid or browser.find_elements(By.CSS_SELECTOR, f'.strip-output [data-out="{name}"]')
        assert target, name
        hover(browser, target[0])
        drawn_inputs = attrs(browser, ".grid-input [data-in]", "data-in")
        want_in = [",".join(map(str, src))] if ",".join(map(str, src)) in drawn_inputs else []
        assert attrs(browser, ".grid-input .hl-in", "data-in") == want_in
        assert attrs(browser, ".grid-output .hl-out", "data-out") == ([name] if in_grid else [])
        assert attrs(browser, ".strip-input .hl-in", "data-start") == [str(_byte(src, ins, in_strides))]
        assert attrs(browser, ".strip-output .hl-out", "data-start") == [str(_byte(out, outs, out_strides))]
        info = browser.find_element(By.CSS_SELECTOR, ".dt-info").text
        assert (
            f"at byte {_byte(out, outs, out_strides)}" in info
            and f"input [{','.join(map(str, src))}]" in info
        )
    # Look at it: the hovered input cell is drawn with its black outline, an unlit one is not.
    lit = browser.find_element(By.CSS_SELECTOR, ".grid-input .hl-in")
    unlit = next(e for e in browser.find_elements(By.CSS_SELECTOR, ".grid-input [data-in]") if e != lit)
    lit_px, unlit_px = png_pixels(lit.screenshot_as_png), png_pixels(unlit.screenshot_as_png)
    background = hex_rgb(_css_hex(lit))
    assert has_colour(lit_px, (0, 0, 0), 30) and has_colour(lit_px, background)
    assert not has_colour(unlit_px, (0, 0, 0), 30)
    if example == DOC_EXAMPLE:
        path = shot_path(tmp_path, "explain-page.png")
        browser.execute_script("document.querySelector('.dmltile h2').scrollIntoView();")  # the picture
        browser.save_screenshot(str(path))
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 20_000


def _css_hex(element) -> str:
    rgb = element.value_of_css_property("background-color")
    r, g, b = (int(v) for v in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def playground():
    if not SCRIPT.exists():
        pytest.skip(f"the dmltile script is not installed next to {SCRIPT.parent}")
    port = _free_port()
    proc = subprocess.Popen(
        [str(SCRIPT), "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        if proc.poll() is not None:
            pytest.fail(f"dmltile serve exited: {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("dmltile serve did not start listening within 30 s")
    yield f"http://127.0.0.1:{port}/"
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _wait_text(driver, element_id: str, fragment: str, timeout: float = 15) -> str:
    WebDriverWait(driver, timeout).until(lambda d: fragment in d.find_element(By.ID, element_id).text)
    return driver.find_element(By.ID, element_id).text


def _type(driver, element_id: str, text: str) -> None:
    box = driver.find_element(By.ID, element_id)
    box.clear()
    box.send_keys(text)


def test_playground_edits_update_the_verdict_hints_and_pictures(browser, playground, tmp_path):
    browser.get(playground)
    _wait_text(browser, "status", "valid at 6.4")
    assert browser.find_elements(By.CSS_SELECTOR, "#result .grid-output [data-out]")
    # A typical slip: the output's last size 8 instead of 3 * 3 = 9.
    _type(browser, "out-sizes", "1, 1, 6, 8")
    assert "INVALID at 6.4" in _wait_text(browser, "status", "INVALID")
    hints = _wait_text(browser, "hints", "DML205")
    assert "Desc.OutputTensor.Desc.Sizes[3]" in hints and "9" in hints
    # The button asks the server for the output desc of input x repeats; the verdict comes back valid.
    browser.find_element(By.ID, "match").click()
    _wait_text(browser, "status", "valid at 6.4")
    assert browser.find_element(By.ID, "out-sizes").get_attribute("value").replace(" ", "") == "1,1,6,9"
    # INT64 at 1.0: the level's rules fire, and the lowest accepting level is named (the input's
    # byte size stays empty, so it is computed for INT64).
    _type(browser, "in-bytes", "")
    for tensor in ("in", "out"):
        Select(browser.find_element(By.ID, f"{tensor}-dtype")).select_by_visible_text("INT64")
    Select(browser.find_element(By.ID, "level")).select_by_visible_text("1.0")
    status = _wait_text(browser, "status", "INVALID at 1.0")
    assert "4.1" in status and "DML302" in _wait_text(browser, "hints", "DML302")
    assert "DML206" not in browser.find_element(By.ID, "hints").text  # both tensors INT64
    # The document shown is the one the server built from the fields and judged.
    sent = json.loads(browser.find_element(By.ID, "doc-json").text)
    assert sent["Desc"]["OutputTensor"] == {
        "Type": "DML_TENSOR_TYPE_BUFFER",
        "Desc": {"DataType": "INT64", "Sizes": [1, 1, 6, 9], "Strides": None},
    }
    # A DataType per tensor: an output type that differs from the input's is the rule registry's DML206.
    Select(browser.find_element(By.ID, "level")).select_by_visible_text("6.4")
    Select(browser.find_element(By.ID, "out-dtype")).select_by_visible_text("INT32")
    hint = _wait_text(browser, "hints", "DML206")
    assert (
        "INT64" in hint and "INT32" in hint and "INVALID at 6.4" in browser.find_element(By.ID, "status").text
    )
    Select(browser.find_element(By.ID, "level")).select_by_visible_text("1.0")
    # Broadcast input strides: the memory view shows shared slots (x2) in the input buffer.
    for tensor in ("in", "out"):
        Select(browser.find_element(By.ID, f"{tensor}-dtype")).select_by_visible_text("FLOAT32")
    _type(browser, "in-strides", "0, 0, 0, 1")
    _wait_text(browser, "status", "valid at 1.0")
    WebDriverWait(browser, 15).until(
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#result .strip-input .seg.shared")) == 3
    )
    # Hovering works in the playground too (the same page script, delegated).
    cell = browser.find_element(By.CSS_SELECTOR, '#result .grid-output [data-out="0,0,4,7"]')
    hover(browser, cell)
    assert attrs(browser, "#result .grid-input .hl-in", "data-in") == ["0,0,0,1"]
    assert attrs(browser, "#result .strip-input .hl-in", "data-start") == [
        "4"
    ]  # strides [0,0,0,1]: element 1
    # Look at it: the verdict box is drawn green for a valid descriptor.
    status = png_pixels(browser.find_element(By.ID, "status").screenshot_as_png)
    assert has_colour(status, (0xE3, 0xF4, 0xE6), 12) and not has_colour(status, (0xFD, 0xE7, 0xEA), 12)
    path = shot_path(tmp_path, "playground.png")
    browser.save_screenshot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 20_000


# -- every exercise, done as a person would ----------------------------------------------------------
# Each one's answer is not visible before it is answered, a wrong answer is refused and the right one
# accepted. "Visible" is judged by the browser: text and field values that are displayed and not under
# a blur filter (how the page veils a guess's answer). Each check first waits until the answer is in
# the page (so that "not visible" cannot pass on a page that has not updated yet), and after the
# answer the same check sees it, so the check itself can fail. The answers are written out by hand.

# The page's text, without white space: all of it (scripts and styles aside), or only what is shown
# (displayed, not blurred), field values included.
_TEXT_JS = """
const shownOnly = arguments[0];
function hidden(el){
  for (; el; el = el.parentElement){
    const s = getComputedStyle(el);
    if (s.display === 'none' || s.visibility === 'hidden' || s.filter.indexOf('blur') >= 0) return true;
  }
  return false;
}
const out = [];
const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
while (walk.nextNode()){
  const el = walk.currentNode.parentElement;
  if (el.closest('script, style')) continue;
  if (!shownOnly || !hidden(el)) out.push(walk.currentNode.textContent);
}
document.querySelectorAll('input, select').forEach(function(el){
  if (!shownOnly || !hidden(el)) out.push(el.value);
});
return out.join('|').replace(/\\s+/g, '');
"""


def page_text(driver, shown_only: bool) -> str:
    return driver.execute_script(_TEXT_JS, shown_only)


def start(driver, url: str, exercise_id: str, title: str) -> None:
    """Open the exercise and wait until the server's answer to its descriptor is shown."""
    if not driver.current_url.startswith(url):
        driver.get(url)
        _wait_text(driver, "status", "valid")
    driver.find_element(By.ID, f"ex-{exercise_id}").click()
    _wait_text(driver, "exercise-title", title)


def answer_is_hidden(driver, fragments: list[str]) -> None:
    """The answer is in the page (the server has answered) but not shown, and nothing says solved."""
    WebDriverWait(driver, 15).until(lambda d: all(f in page_text(d, False) for f in fragments))
    shown = page_text(driver, True)
    assert not [f for f in fragments if f in shown], shown
    assert not any(w in driver.find_element(By.ID, "exercise-status").text for w in ("Right", "Solved"))


def guess(driver, text: str, outcome: str) -> str:
    _type(driver, "guess", text)
    driver.find_element(By.ID, "reveal").click()
    return _wait_text(driver, "exercise-status", outcome)


def edit(driver, fields: dict[str, str]) -> None:
    for field, value in fields.items():
        element = driver.find_element(By.ID, field)
        if element.tag_name == "select":
            Select(element).select_by_visible_text(value)
        else:
            _type(driver, field, value)


# Each exercise, solved by hand: a guess's wrong and right answers and the text that would give it
# away; a goal's wrong and right edits of the form, and what the page says to each.
GUESSES = {
    "predict": ("Predict", "2, 1, 3", "6, 1, 3", ["6,1,3", '"Sizes":[6,1,3]']),
    "padding": ("How many", "28", "4 bytes", ["Padding:4of28bytes"]),
}
_SOLVED_AT_1_0 = {  # the INT64 data read as FLOAT32 pairs: the same bytes in and out
    "in-dtype": "FLOAT32",
    "out-dtype": "FLOAT32",
    "in-sizes": "1, 1, 2, 6",
    "repeats": "1, 1, 2, 2",
    "out-sizes": "1, 1, 4, 12",
}
GOALS = {
    "valid-1.0": (
        "Make this",
        {**_SOLVED_AT_1_0, "level": "4.1"},  # valid, but at another level than asked
        "valid at 4.1",
        {"level": "1.0"},
    ),
    "broadcast": ("Broadcast", {"in-strides": "0, 0, 1, 0"}, "columns share", {"in-strides": "0, 0, 0, 1"}),
}


def test_every_exercise_is_covered_here():
    assert set(GUESSES) | set(GOALS) == {e["id"] for e in EXERCISES}
    assert {e["id"] for e in EXERCISES if e["kind"] == "guess"} == set(GUESSES)


@pytest.mark.parametrize("exercise_id", sorted(GUESSES))
def test_a_guess_is_hidden_refused_when_wrong_and_accepted_when_right(browser, playground, exercise_id):
    title, wrong, right, fragments = GUESSES[exercise_id]
    start(browser, playground, exercise_id, title)
    answer_is_hidden(browser, fragments)
    assert guess(browser, wrong, "Not quite").startswith("Not quite.")
    start(browser, playground, exercise_id, title)  # again: the answer is veiled anew
    answer_is_hidden(browser, fragments)
    assert guess(browser, right, "Right").startswith("Right!")
    shown = page_text(browser, True)  # revealed: the same check now sees the answer
    assert any(f in shown for f in fragments), shown


@pytest.mark.parametrize("exercise_id", sorted(GOALS))
def test_a_goal_is_refused_until_the_form_reaches_it(browser, playground, exercise_id):
    title, wrong, refusal, right = GOALS[exercise_id]
    start(browser, playground, exercise_id, title)
    answer_is_hidden(browser, [])
    assert _wait_text(browser, "exercise-status", "Not yet").startswith("Not yet")
    edit(browser, wrong)
    assert "Not yet" in _wait_text(browser, "exercise-status", refusal)
    edit(browser, right)
    assert _wait_text(browser, "exercise-status", "Solved").startswith("Solved")
    assert browser.find_element(By.ID, "status").text.startswith("valid at")
