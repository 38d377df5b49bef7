"""DxDispatch's printed output, and the CLI around export/compare/validate.

The captured samples are written by hand per DxDispatch's print code (Executor.cpp BufferDataView:
``Resource '<name>': v0, v1`` with std::ostream's default 6-digit format; verbose rows
``[index] value (0xBITS)`` with the index right-aligned to the digits of the count and the bits
space-padded to 2 hex digits per byte; INT8/UINT8 streamed as characters).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import dmltile
from dmltile.cli import app
from dmltile.errors import UnreadableOutput
from dmltile.interop.dxdispatch_print import compare_dxdispatch, compare_printed, parse_printed

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RUN_HEADER = (
    "Running on 'NVIDIA GeForce RTX 3080'\n"
    "Dispatch 'tile': 1 iterations, 0.5491 ms median (CPU), 0.0061 ms median (GPU)\n"
)
runner = CliRunner()


def words(text: str) -> str:
    """Output with rich's line wrapping undone."""
    return " ".join(text.split())


def compare_text(text, expected, resource=None):
    data = text.encode("latin-1") if isinstance(text, str) else text
    flat = np.asarray(expected)
    return compare_printed(parse_printed(data, flat.size, flat.dtype, resource), flat)


F32 = np.array([0.1, 1234567, -0.0, np.nan, np.inf, -np.inf, 1e-7, 3], np.float32)
F32_PRINTED = "Resource 'output': 0.1, 1.23457e+06, -0, nan, inf, -inf, 1e-07, 3\n"


def test_float32_print_identical_at_six_digits():
    result = compare_text(RUN_HEADER + F32_PRINTED, F32)
    assert result.identical and "6 significant digits" in result.message


def test_msvc_nan_spellings_are_nan():
    text = "Resource 'output': 0.1, 1.23457e+06, -0, -nan(ind), inf, -inf, 1e-07, 3\n"
    assert compare_text(text, F32).identical


@pytest.mark.parametrize(
    "printed, index",
    [
        ("0.1, 1.23456e+06, -0, nan, inf, -inf, 1e-07, 3", 1),  # a digit off
        ("0.1, 1.23457e+06, 0, nan, inf, -inf, 1e-07, 3", 2),  # +0 where -0 is expected
        ("0.1, 1.23457e+06, -0, 0, inf, -inf, 1e-07, 3", 3),  # a number where NaN is expected
        ("0.1, 1.23457e+06, -0, nan, inf, inf, 1e-07, 3", 5),
    ],
)
def test_float32_first_difference(printed, index):
    result = compare_text(f"Resource 'output': {printed}\n", F32)
    assert not result.identical and result.index == index and f"index {index}" in result.message


F16 = np.array([0.1, 65504, 5.9604645e-08, -2.5], np.float16)


def test_float16_print():
    assert compare_text("Resource 'output': 0.0999756, 65504, 5.96046e-08, -2.5\n", F16).identical
    neighbour = compare_text(
        "Resource 'output': 0.100098, 65504, 5.96046e-08, -2.5\n", F16
    )  # the next float16 up
    assert not neighbour.identical and neighbour.index == 0


def test_int_print_is_exact():
    ints = np.array([-3, 0, 2147483647, -2147483648], np.int32)
    assert compare_text("Resource 'output': -3, 0, 2147483647, -2147483648\n", ints).identical
    result = compare_text("Resource 'output': -3, 0, 2147483646, -2147483648\n", ints)
    assert not result.identical and result.index == 2 and "exactly" in result.message
    big = np.array([2**64 - 1, 0], np.uint64)
    assert compare_text("Resource 'output': 18446744073709551615, 0\n", big).identical


def test_a_short_print_is_a_difference():
    result = compare_text("Resource 'output': 1, 2\n", np.array([1, 2, 3], np.int16))
    assert not result.identical and "printed 2 values" in result.message and result.index == 2


def test_verbose_print_compares_bits():
    expected = np.array([1.0, np.nan, -0.0], np.float32)
    text = "Resource 'output':\n[0] 1 (0x3F800000)\n[1] nan (0x7FC00000)\n[2] -0 (0x80000000)\n"
    assert compare_text(text, expected).identical
    payload = text.replace("0x7FC00000", "0x7FC00001")  # the same "nan" text, other bits
    result = compare_text(payload, expected)
    assert not result.identical and result.index == 1 and "bit-exact" in result.message


def test_verbose_rows_stop_at_a_malformed_row():
    text = "Resource 'output':\n[0] 1 (0x3F800000)\n[1] nan\n[2] -0 (0x80000000)\n"
    result = compare_text(text, np.array([1.0, np.nan, -0.0], np.float32))
    assert not result.identical and "printed 1 values" in result.message


def test_verbose_print_with_padded_index_and_bits():
    expected = np.arange(12, dtype=np.int16)
    rows = "".join(f"[{i:2d}] {i} (0x{i:4X})\n" for i in range(12))  # "[ 5] 5 (0x   5)"
    assert "[ 5] 5 (0x   5)" in rows
    assert compare_text("Resource 'output':\n" + rows, expected).identical


def test_int8_characters():
    expected = np.array([1, 2, 65, -1], np.int8)
    assert compare_text(b"Resource 'output': \x01, \x02, A, \xff\n", expected).identical
    assert not compare_text(b"Resource 'output': \x01, \x02, B, \xff\n", expected).identical
    newline = np.array([10, 5], np.uint8)  # value 10 is a newline, CRLF on Windows text-mode stdout
    assert compare_text(b"Resource 'output': \r\n, \x05\r\n", newline).identical
    carriage_return = np.array([5, 13], np.uint8)  # 13 last, in a capture whose lines end in LF only
    assert compare_text(RUN_HEADER.encode() + b"Resource 'output': \x05, \r\n", carriage_return).identical
    crlf_header = RUN_HEADER.replace("\n", "\r\n").encode()
    assert compare_text(crlf_header + b"Resource 'output': \x05, \r\r\n", carriage_return).identical
    verbose = b"Resource 'output':\r\n[0] \r\n (0x A)\r\n[1] \x05 (0x 5)\r\n\r\n"
    assert compare_text(verbose, newline).identical


def test_int8_print_cut_by_a_zero_byte_is_unreadable():
    with pytest.raises(UnreadableOutput, match="zero byte.*index 1"):
        compare_text(b"Resource 'output': \x01, \nNext line\n", np.array([1, 0, 3], np.uint8))


def test_which_resource():
    two = "Resource 'input': 1, 2\nResource 'result': 5, 6\n"
    with pytest.raises(UnreadableOutput, match="several resources"):
        compare_text(two, np.array([5, 6], np.int32))
    assert compare_text(two, np.array([5, 6], np.int32), resource="result").identical
    with pytest.raises(UnreadableOutput, match='no "Resource'):
        compare_text("ERROR creating dispatchable 'tile'\n", np.array([5], np.int32))


# -- CLI -------------------------------------------------------------------------------------


def _export(tmp_path, example="doc_example.json", *extra):
    model = tmp_path / "tile.json"
    result = runner.invoke(
        app, ["export", str(EXAMPLES / example), "--dxdispatch", "-o", str(model), "--expect", *extra]
    )
    assert result.exit_code == 0, result.output
    return model, tmp_path / "tile.expected.npy"


def test_export_expect_then_compare(tmp_path):
    model, expected = _export(tmp_path)
    assert dmltile.load(model) == dmltile.load(EXAMPLES / "doc_example.json")
    shown = np.load(expected)
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 2, 3)
    assert np.array_equal(shown, np.tile(x, (1, 1, 3, 3)).ravel())
    doc_print = (
        "1, 2, 3, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 4, 5, 6, " * 3
    )  # DirectML's example output, row-major
    out = tmp_path / "out.txt"
    out.write_text(RUN_HEADER + "Resource 'output': " + doc_print.rstrip(", ") + "\n")
    ok = runner.invoke(app, ["compare-dxdispatch", str(out), str(expected)])
    assert ok.exit_code == 0 and "identical" in ok.output
    out.write_text(RUN_HEADER + "Resource 'output': " + doc_print.rstrip(", ").replace("4", "7", 1) + "\n")
    bad = runner.invoke(app, ["compare-dxdispatch", str(out), str(expected), "--json"])
    assert bad.exit_code == 1 and json.loads(bad.stdout)["index"] == 9
    out.write_text("nothing printed\n")
    assert runner.invoke(app, ["compare-dxdispatch", str(out), str(expected)]).exit_code == 2
    assert (
        runner.invoke(app, ["compare-dxdispatch", str(tmp_path / "missing.txt"), str(expected)]).exit_code
        == 2
    )


def test_export_with_input_npy_and_8bit_write_file(tmp_path):
    x = np.array([[0, 1, 2, 3]] * 2, np.int8).reshape(1, 1, 2, 4)
    desc = dmltile.tile_desc([1, 1, 2, 4], [1, 2, 1, 2], dtype="INT8")
    (tmp_path / "d.json").write_text(desc.to_json())
    np.save(tmp_path / "x.npy", x)
    model = tmp_path / "tile.json"
    result = runner.invoke(
        app,
        [
            "export",
            str(tmp_path / "d.json"),
            "--dxdispatch",
            "-o",
            str(model),
            "--input",
            str(tmp_path / "x.npy"),
            "--expect",
        ],
    )
    assert result.exit_code == 0, result.output
    commands = json.loads(model.read_text())["commands"]
    assert {"type": "writeFile", "resource": "output", "targetPath": "tile.output.npy"} in commands
    expected = np.load(tmp_path / "tile.expected.npy")
    assert np.array_equal(expected, np.tile(x, (1, 2, 1, 2)).ravel())
    written = np.concatenate([expected, np.zeros(0, np.int8)])  # what writeFile would write (no padding here)
    np.save(tmp_path / "tile.output.npy", written)
    assert compare_dxdispatch(tmp_path / "tile.output.npy", tmp_path / "tile.expected.npy").identical
    written[5] = 9
    np.save(tmp_path / "tile.output.npy", written)
    diff = runner.invoke(
        app, ["compare-dxdispatch", str(tmp_path / "tile.output.npy"), str(tmp_path / "tile.expected.npy")]
    )
    assert diff.exit_code == 1 and "index 5" in words(diff.output)


def test_export_usage_errors(tmp_path):
    doc = str(EXAMPLES / "doc_example.json")
    assert runner.invoke(app, ["export", doc]).exit_code == 2  # no format chosen
    assert (
        runner.invoke(app, ["export", doc, "--dxdispatch", "--seed", "1", "--input", "x.npy"]).exit_code == 2
    )
    assert runner.invoke(app, ["export", doc, "--dxdispatch", "--expect"]).exit_code == 2  # --expect needs -o
    assert runner.invoke(app, ["export", str(tmp_path / "nope.json"), "--dxdispatch"]).exit_code == 2
    printed = runner.invoke(app, ["export", doc, "--dxdispatch", "--seed", "3"])
    assert (
        printed.exit_code == 0
        and json.loads(printed.stdout)["dispatchables"]["tile"]["desc"]["RepeatsCount"] == 4
    )


def test_export_of_an_invalid_descriptor_warns_and_refuses_expectations(tmp_path):
    bad = str(EXAMPLES / "invalid_output_sizes.json")
    assert runner.invoke(app, ["export", bad, "--dxdispatch"]).exit_code == 0
    assert (
        runner.invoke(
            app, ["export", bad, "--dxdispatch", "-o", str(tmp_path / "m.json"), "--expect"]
        ).exit_code
        == 1
    )


MODEL = {
    "resources": {},
    "dispatchables": {
        "good": {
            "type": "TILE",
            "desc": {
                "InputTensor": {"DataType": "FLOAT32", "Sizes": [2]},
                "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4]},
                "RepeatsCount": 1,
                "Repeats": [2],
            },
        },
        "bad": {
            "type": "TILE",
            "desc": {
                "InputTensor": {"DataType": "FLOAT32", "Sizes": [2]},
                "OutputTensor": {"DataType": "FLOAT32", "Sizes": [5]},
                "RepeatsCount": 1,
                "Repeats": [2],
            },
        },
        "gemm": {"type": "DML_OPERATOR_GEMM", "desc": {}},
    },
    "commands": [],
}


def test_validate_names_each_dispatchable(tmp_path):
    path = tmp_path / "model.json"
    path.write_text(json.dumps(MODEL))
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 1
    assert "dispatchable 'good': valid" in words(result.output) and "dispatchable 'bad': INVALID" in words(
        result.output
    )
    assert "dispatchable 'gemm': not covered" in words(result.output)
    doc = json.loads(runner.invoke(app, ["validate", str(path), "--json"]).stdout)
    files = {f["file"]: f["reports"][0] for f in doc["files"]}
    assert files[f"{path} dispatchable 'bad'"]["issues"][0]["code"] == "DML205"
    assert doc["not_covered"] == [{"file": f"{path} dispatchable 'gemm'", "operator": "DML_OPERATOR_GEMM"}]
    only_good = dict(MODEL, dispatchables={k: v for k, v in MODEL["dispatchables"].items() if k != "bad"})
    path.write_text(json.dumps(only_good))
    assert runner.invoke(app, ["validate", str(path)]).exit_code == 0
    no_tile = dict(MODEL, dispatchables={"gemm": MODEL["dispatchables"]["gemm"]})
    path.write_text(json.dumps(no_tile))
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 1 and "DML207" in result.output


def test_validate_a_model_whose_dispatchables_are_not_an_object(tmp_path):
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"resources": {}, "dispatchables": [], "commands": []}))
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2 and "DML001" in result.output  # DML001 is a usage-level error in validate


def test_validate_the_shipped_dxdispatch_example():
    result = runner.invoke(
        app, ["validate", str(EXAMPLES / "dxdispatch" / "tile_doc_example.json"), "--feature-level", "1.0"]
    )
    assert result.exit_code == 0 and "dispatchable 'tile': valid" in words(result.output)


# -- properties ------------------------------------------------------------------------------


def cpp_print(values: np.ndarray) -> str:
    """``std::ostream << v`` with the default format: C's %g (precision 6) for floats; FLOAT16
    goes through float, which %g shows the same as the double."""
    if values.dtype.kind == "f":
        texts = ["nan" if np.isnan(v) else f"{float(v):g}" for v in values]
    else:
        texts = [str(int(v)) for v in values]
    return "Resource 'output': " + ", ".join(texts) + "\n"


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 2**16 - 1), min_size=2, max_size=40), st.data())
def test_every_float16_change_shows_in_the_print(bits, data):
    expected = np.array(bits, np.uint16).view(np.float16)
    assert compare_text(cpp_print(expected), expected).identical
    i = data.draw(st.integers(0, len(bits) - 1))
    other = data.draw(st.integers(0, 2**16 - 1).filter(lambda b: b != bits[i]))
    printed = expected.copy()
    printed.view(np.uint16)[i] = other
    if np.isnan(printed[i]) and np.isnan(expected[i]):
        return  # NaN payloads do not print
    result = compare_text(cpp_print(printed), expected)
    assert not result.identical and result.index == i


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]), st.data())
def test_integer_prints(dtype, data):
    info = np.iinfo(dtype)
    values = data.draw(st.lists(st.integers(int(info.min), int(info.max)), min_size=1, max_size=30))
    expected = np.array(values, dtype)
    if expected.itemsize == 1:
        text = (
            RUN_HEADER.encode()
            + b"Resource 'output': "
            + b", ".join(bytes([v & 0xFF]) for v in values)
            + b"\n"
        )
        if 0 in values:
            return  # covered by test_int8_print_cut_by_a_zero_byte_is_unreadable
    else:
        text = cpp_print(expected)
    assert compare_text(text, expected).identical
