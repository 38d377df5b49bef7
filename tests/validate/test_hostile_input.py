"""Reading is bounded and never a raw Python error: special files, size limits, repeated keys,
deep nesting, huge arrays, many issues, and objects that are not documents at all."""

from __future__ import annotations

import io
import json
import os
import re
import threading
import tracemalloc

import pytest

import dmltile
from dmltile.errors import DmlTileError, InputError
from dmltile.validate import document, source


def _no_hang(fn, *args, timeout: float = 10.0):
    """Run ``fn`` in a thread; fail (instead of hanging the suite) if it does not return in time."""
    box: dict = {}

    def target():
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # noqa: BLE001 - handed to the test thread
            box["error"] = e

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"{fn.__name__} blocked on {args}"
    if "error" in box:
        raise box["error"]
    return box.get("value")


@pytest.fixture
def fifo(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("needs named pipes")
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("entry", [dmltile.validate, dmltile.load, dmltile.from_dxdispatch])
def test_a_fifo_is_refused_before_it_is_opened(fifo, entry):
    with pytest.raises(InputError, match="not a regular file"):
        _no_hang(entry, fifo)
    with pytest.raises(InputError, match="not a regular file"):
        _no_hang(entry, str(fifo))


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("entry", [dmltile.validate, dmltile.load, dmltile.from_dxdispatch])
def test_dev_zero_is_refused_not_read_until_memory_runs_out(entry):
    with pytest.raises(InputError, match="not a regular file"):
        _no_hang(entry, "/dev/zero")


def test_a_directory_is_refused_with_its_name(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        dmltile.validate(tmp_path)


def test_the_size_limit_is_named_and_checked_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "big.json"
    with open(path, "wb") as f:  # sparse: 100 MB that take no disk space
        f.truncate(100 * 1024 * 1024)
    with pytest.raises(InputError, match=f"at most {source.MAX_DOCUMENT_BYTES} bytes"):
        dmltile.validate(path)


def test_read_regular_never_reads_past_its_limit(tmp_path):
    path = tmp_path / "d.json"
    path.write_bytes(b"x" * 100)
    assert source.read_regular(path, "descriptor", limit=100) == b"x" * 100
    with pytest.raises(InputError, match="descriptor files of at most 99 bytes"):
        source.read_regular(path, "descriptor", limit=99)


def test_memory_follows_the_file_not_the_limit(tmp_path):
    """A read's buffer is sized by the count asked for: asking for the limit (2 GiB for a model) would
    allocate it, whatever the file holds."""
    path = tmp_path / "m.onnx"
    path.write_bytes(b"x" * 1000)
    tracemalloc.start()
    try:
        assert source.read_regular(path, "ONNX model", limit=1 << 30) == b"x" * 1000
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_a_stream_is_read_to_its_end_or_just_past_the_limit():
    data = bytes(range(256)) * 1000
    assert source.read_at_most(io.BytesIO(data), len(data) + 1, 10) == data  # in growing steps
    assert source.read_at_most(io.BytesIO(data), 5001, 10) == data[:5001]
    assert source.read_at_most(io.BytesIO(b""), 100, 0) == b""


def shown(value) -> str:
    """A test's name for a value: its repr without a memory address, the same in every process."""
    return re.sub(r" at 0x[0-9a-f]+", "", repr(value))


@pytest.mark.parametrize(
    "text, key",
    [
        ('{"Repeats": [1], "Repeats": [2]}', "Repeats"),
        ('{"InputTensor": {"Sizes": [1], "Sizes": [1]}}', "Sizes"),
    ],
)
def test_a_repeated_key_is_dml003_naming_the_key(text, key):
    report = dmltile.validate(text)
    assert not report.valid and report.codes == ["DML003"]
    assert f'"{key}" appears twice' in report.issues[0].message
    assert report.issues[0].path == key


def test_a_repeated_key_in_a_dxdispatch_model_is_named_too():
    text = '{"dispatchables": {"t": {"type": "TILE"}, "t": {"type": "TILE"}}}'
    with pytest.raises(DmlTileError, match='"t" appears twice'):
        dmltile.from_dxdispatch(text)


@pytest.mark.parametrize(
    "value",
    [bytearray(b'{"Repeats": [1]}'), memoryview(b"{}"), "\x00", "\ud800", "", "   ", b"\xff\xfe", 3.5, None],
    ids=shown,
)
def test_values_that_are_no_document_give_an_invalid_report_or_input_error(value):
    try:
        report = dmltile.validate(value)
    except InputError as e:  # "   " names a file that does not exist
        assert "no such file" in str(e)
        return
    assert not report.valid and report.issues


@pytest.mark.parametrize("value", [object(), {1, 2}, 3j, (1, 2), type], ids=shown)
def test_objects_that_are_no_document_raise_input_error(value):
    with pytest.raises(InputError, match="got"):
        dmltile.validate(value)


def _nested(depth: int, leaf) -> dict:
    doc: dict = {}
    cur = doc
    for _ in range(depth):
        cur["Desc"] = {}
        cur = cur["Desc"]
    cur["x"] = leaf
    return doc


@pytest.mark.parametrize("depth", [100, 5_000, 50_000])
def test_deep_python_dicts_are_issues_not_recursion_errors(depth):
    report = dmltile.validate(_nested(depth, 1))
    assert not report.valid and "nested more than" in report.issues[0].message
    with pytest.raises(DmlTileError):
        dmltile.load(_nested(depth, 1))


def test_deep_json_text_is_an_issue():
    report = dmltile.validate("[" * 100_000 + "]" * 100_000)
    assert not report.valid and report.codes == ["DML001"]


def test_a_hundred_thousand_dimensions_are_reported_once_per_array_and_fast():
    doc = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1] * 100_000},
        "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1] * 100_000},
        "Repeats": [-1] * 200_000,
    }
    report = dmltile.validate(json.dumps(doc))
    assert report.codes == ["DML004"] * 3
    assert "100000 values" in report.issues[0].message and "at most 8 dimensions" in report.issues[0].message


def test_issues_are_capped_per_document_and_the_rest_counted(doc):
    for i in range(5_000):
        doc["Desc"][f"Unknown{i}"] = i
    report = dmltile.validate(doc)
    assert len(report.issues) == document.MAX_ISSUES + 1
    assert "4900 more issues not listed" in report.issues[-1].message


def test_tile_desc_with_a_non_number_is_a_library_error():
    with pytest.raises(DmlTileError, match=r"input_sizes\[0\] is 'a'"):
        dmltile.tile_desc(["a"], [1])
    with pytest.raises(DmlTileError, match="repeats must be a list"):
        dmltile.tile_desc([1], "1")
    with pytest.raises(DmlTileError, match=r"strides\[0\]"):
        dmltile.tile_desc([1], [1], strides=[None])
