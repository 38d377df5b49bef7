"""``dmltile run``: the output equals numpy.tile of the input, exit statuses, and --compare."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dmltile
from dmltile.cli.run import seeded_input
from tests.cli_support import DOC_EXAMPLE, EXAMPLES, invoke, no_traceback, script


@pytest.mark.parametrize(
    "name",
    [
        "doc_example.json",
        "valid_fl2_1_int8_4d.json",
        "valid_strided_padded_input.json",
        "valid_fl4_1_int64_2d.json",
    ],
)
def test_run_input_to_output_equals_numpy_tile(tmp_path, name):
    desc = dmltile.load(EXAMPLES / name)
    dtype = desc.input.data_type.numpy_dtype
    # Values per element of the input's buffer, read through its Strides: an array a GPU can hold
    # (a broadcast input repeats its values along its stride-0 axes).
    buffer = (np.arange(desc.input.total_tensor_size_in_bytes // dtype.itemsize) % 120 - 60).astype(dtype)
    strides = [s * dtype.itemsize for s in desc.input.effective_strides]
    x = np.lib.stride_tricks.as_strided(buffer, desc.input.sizes, strides).copy()
    np.save(tmp_path / "x.npy", x)
    proc = script("run", EXAMPLES / name, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    assert proc.returncode == 0, proc.stderr
    y = np.load(tmp_path / "y.npy")
    assert y.dtype == dtype and np.array_equal(y, np.tile(x, desc.repeats))


def test_seeded_input_is_deterministic_and_tiled(tmp_path):
    for n in (1, 2):
        assert invoke("run", DOC_EXAMPLE, "--seed", "7", "--output", tmp_path / f"y{n}.npy").exit_code == 0
    y1, y2 = np.load(tmp_path / "y1.npy"), np.load(tmp_path / "y2.npy")
    assert np.array_equal(y1, y2)
    x = seeded_input(dmltile.load(DOC_EXAMPLE), 7)
    assert np.array_equal(y1, np.tile(x, (1, 1, 3, 3)))
    assert not np.array_equal(x, seeded_input(dmltile.load(DOC_EXAMPLE), 8))


def test_printed_output_for_the_doc_example():
    # The DirectML page: [[1,2,3],[4,5,6]] tiled 3x3 along the last two axes.
    result = invoke("run", DOC_EXAMPLE, "--input", _save_doc_input())
    assert result.exit_code == 0
    assert "[1. 2. 3. 1. 2. 3. 1. 2. 3.]" in result.stdout and "[4. 5. 6. 4. 5. 6. 4. 5. 6.]" in result.stdout


def _save_doc_input():
    import tempfile

    path = tempfile.NamedTemporaryFile(suffix=".npy", delete=False).name
    np.save(path, np.array([[[[1, 2, 3], [4, 5, 6]]]], dtype=np.float32))
    return path


def test_invalid_descriptor_exits_1():
    result = invoke("run", EXAMPLES / "invalid_zero_repeat.json")
    assert result.exit_code == 1 and "DML203" in result.stdout


def test_invalid_at_the_chosen_level_exits_1():
    assert invoke("run", EXAMPLES / "valid_fl4_1_int64_2d.json", "--feature-level", "3.1").exit_code == 1


@pytest.mark.parametrize(
    "case",
    ["wrong_shape", "wrong_dtype", "not_npy", "missing", "both_sources", "bad_level", "malformed_json"],
)
def test_bad_inputs_exit_2_without_traceback(tmp_path, case):
    args = ["run", DOC_EXAMPLE]
    if case == "wrong_shape":
        np.save(tmp_path / "x.npy", np.zeros((2, 3), np.float32))
        args += ["--input", tmp_path / "x.npy"]
    elif case == "wrong_dtype":
        np.save(tmp_path / "x.npy", np.zeros((1, 1, 2, 3), np.float64))
        args += ["--input", tmp_path / "x.npy"]
    elif case == "not_npy":
        (tmp_path / "x.npy").write_bytes(b"\x00not an array")
        args += ["--input", tmp_path / "x.npy"]
    elif case == "missing":
        args += ["--input", tmp_path / "none.npy"]
    elif case == "both_sources":
        args += ["--input", tmp_path / "none.npy", "--seed", "1"]
    elif case == "bad_level":
        args += ["--feature-level", "8.8"]
    else:
        (tmp_path / "d.json").write_text("{")
        args[1] = tmp_path / "d.json"
    proc = script(*args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    no_traceback(proc.stdout, proc.stderr)
    assert proc.stderr.count("\n") == 1  # one clear line


def test_onnxruntime_backend_matches_numpy_tile_or_says_why_not(tmp_path):
    desc = dmltile.load(DOC_EXAMPLE)
    try:
        dmltile.compile(desc, backend="onnxruntime")
        available = True
    except dmltile.DmlTileError:
        available = False
    result = invoke(
        "run", DOC_EXAMPLE, "--seed", "3", "--backend", "onnxruntime", "--output", tmp_path / "y.npy"
    )
    if not available:
        assert result.exit_code == 2 and "onnxruntime" in result.stderr
        return
    assert result.exit_code == 0, result.stderr
    assert np.array_equal(np.load(tmp_path / "y.npy"), np.tile(seeded_input(desc, 3), desc.repeats))


def test_compare_backends():
    if not hasattr(dmltile, "compare_backends"):
        result = invoke("run", DOC_EXAMPLE, "--compare")
        assert result.exit_code == 2 and "compare_backends" in result.stderr
        pytest.skip("compare_backends not available in this build")
    result = invoke("run", DOC_EXAMPLE, "--seed", "2", "--compare")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "identical" in result.stdout


def test_too_large_a_tensor_is_refused_before_allocation(tmp_path):
    big = dmltile.tile_desc([1, 1, 1 << 15, 1 << 15], [1, 1, 1, 2])  # 4 GiB input, 8 GiB output
    path = tmp_path / "big.json"
    path.write_text(big.to_json())
    result = invoke("run", path)
    assert result.exit_code == 2 and "at most" in result.stderr


def test_a_warning_is_shown_but_the_run_goes_ahead(tmp_path):
    desc = dmltile.tile_desc([2, 1], [1, 2]).to_dict()
    desc["Desc"]["OutputTensor"]["Desc"]["TotalTensorSizeInBytes"] = 18  # not a multiple of 4: DML106
    path = tmp_path / "odd_size.json"
    path.write_text(dmltile.load(desc).to_json())
    result = invoke("run", path, "--seed", "1")
    assert result.exit_code == 0 and "DML106" in result.stderr


def test_aliasing_output_strides_are_refused_before_running(tmp_path):
    desc = dmltile.tile_desc([2, 1], [1, 2]).to_dict()
    desc["Desc"]["OutputTensor"]["Desc"]["Strides"] = [0, 1]  # two output rows share memory: DML109
    path = tmp_path / "alias.json"
    path.write_text(dmltile.load(desc).to_json())
    result = invoke("run", path, "--seed", "1")
    assert result.exit_code == 1 and "DML109" in result.stdout


PADDED_OUTPUT = {
    "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 3]},
    "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 4, 6], "Strides": [32, 32, 8, 1]},
    "Repeats": [1, 1, 2, 2],
}


def _naive_output_buffer(x: np.ndarray, fill: int) -> np.ndarray:
    """Hand-built expectation: rows of 8 floats (stride 8), 6 used, 30 elements (120 bytes) in all."""
    buf = np.full(120, fill, np.uint8)
    elements = buf.view(np.float32)
    for r in range(4):
        for c in range(6):
            elements[r * 8 + c] = x[0, 0, r % 2, c % 3]
    return buf


@pytest.mark.parametrize("poison", [False, True])
def test_output_buffer_keeps_or_poisons_padding(tmp_path, poison):
    desc_path = tmp_path / "padded.json"
    desc_path.write_text(__import__("json").dumps(PADDED_OUTPUT))
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 2, 3)
    np.save(tmp_path / "x.npy", x)
    args = ["run", desc_path, "--input", tmp_path / "x.npy", "--output-buffer", tmp_path / "out.bin"]
    result = invoke(*args, *(["--poison-padding"] if poison else []))
    assert result.exit_code == 0, result.output
    assert "24 padding bytes" in result.output
    got = np.fromfile(tmp_path / "out.bin", np.uint8)
    assert np.array_equal(got, _naive_output_buffer(x, 0xCD if poison else 0))


def test_input_buffer_is_read_through_the_input_strides(tmp_path):
    # valid_strided_padded_input: Sizes [1, 2, 2, 3], Strides [0, 0, 4, 1]: rows of 4 floats, channels broadcast
    raw = np.array([1, 2, 3, -1, 4, 5, 6, -1], np.float32)
    raw.tofile(tmp_path / "in.bin")
    result = invoke(
        "run",
        EXAMPLES / "valid_strided_padded_input.json",
        "--input-buffer",
        tmp_path / "in.bin",
        "--output",
        tmp_path / "y.npy",
    )
    assert result.exit_code == 0, result.output
    logical = np.broadcast_to(np.array([[1, 2, 3], [4, 5, 6]], np.float32), (1, 2, 2, 3))
    assert np.array_equal(np.load(tmp_path / "y.npy"), np.tile(logical, (1, 1, 2, 2)))


def test_buffer_mode_refuses_a_broadcast_input_with_different_values(tmp_path):
    x = np.arange(12, dtype=np.float32).reshape(1, 2, 2, 3)  # channel 1 differs, but the channel stride is 0
    np.save(tmp_path / "x.npy", x)
    result = invoke(
        "run",
        EXAMPLES / "valid_strided_padded_input.json",
        "--input",
        tmp_path / "x.npy",
        "--output-buffer",
        tmp_path / "o.bin",
    )
    assert result.exit_code == 2 and "stride-0" in result.output


def _broadcast_rows_desc(tmp_path):
    # Input Strides [0, 1]: the four input rows are one row of memory, read four times.
    doc = {
        "InputTensor": {
            "DataType": "DML_TENSOR_DATA_TYPE_FLOAT32",
            "DimensionCount": 2,
            "Sizes": [4, 3],
            "Strides": [0, 1],
            "TotalTensorSizeInBytes": 12,
        },
        "OutputTensor": {
            "DataType": "DML_TENSOR_DATA_TYPE_FLOAT32",
            "DimensionCount": 2,
            "Sizes": [4, 6],
            "TotalTensorSizeInBytes": 96,
        },
        "RepeatsCount": 2,
        "Repeats": [1, 2],
    }
    path = tmp_path / "broadcast.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("compare", [False, True])
def test_input_no_gpu_buffer_can_hold_is_refused_alike_with_and_without_compare(tmp_path, compare):
    desc = _broadcast_rows_desc(tmp_path)
    np.save(tmp_path / "x.npy", np.arange(12, dtype=np.float32).reshape(4, 3))  # rows differ
    args = ["run", desc, "--input", tmp_path / "x.npy", "-l", "5.0"] + (["--compare"] if compare else [])
    result = invoke(*args)
    assert result.exit_code == 2 and "[0, 1]" in result.stderr and "stride-0" in result.stderr
    assert result.stdout == ""  # no output rows a dispatch could never produce
    # The one check: the same words as a GPU upload (pack_tensor) of that array gives.
    buffer_mode = invoke("run", desc, "--input", tmp_path / "x.npy", "-l", "5.0", "--poison-padding")
    assert buffer_mode.exit_code == 2 and buffer_mode.stderr == result.stderr


def test_input_whose_shared_elements_agree_runs_as_numpy_tile(tmp_path):
    x = np.tile(np.array([7, -1, 2.5], np.float32), (4, 1))
    np.save(tmp_path / "x.npy", x)
    result = invoke(
        "run",
        _broadcast_rows_desc(tmp_path),
        "--input",
        tmp_path / "x.npy",
        "-l",
        "5.0",
        "--output",
        tmp_path / "y.npy",
    )
    assert result.exit_code == 0, result.output
    assert np.array_equal(np.load(tmp_path / "y.npy"), np.tile(x, (1, 2)))


@pytest.mark.parametrize(
    "extra",
    [
        ["--input-buffer", "missing.bin"],
        ["--input-buffer", "x.bin", "--seed", "1"],
        ["--compare", "--poison-padding"],
    ],
)
def test_buffer_options_misused_exit_2(tmp_path, extra):
    (tmp_path / "x.bin").write_bytes(bytes(24))
    extra = [str(tmp_path / e) if e.endswith(".bin") else e for e in extra]
    result = invoke("run", DOC_EXAMPLE, *extra)
    assert result.exit_code == 2


@pytest.mark.parametrize("kind", ["json", "objects", "truncated", "directory"])
def test_input_that_is_not_a_plain_npy_array_gets_a_clear_line(tmp_path, kind):
    path = tmp_path / "x.npy"
    if kind == "json":
        path = DOC_EXAMPLE
    elif kind == "objects":
        np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    elif kind == "truncated":
        np.save(path, np.zeros((1, 1, 2, 3), np.float32))
        path.write_bytes(path.read_bytes()[:-8])
    else:
        path = tmp_path
    result = invoke("run", DOC_EXAMPLE, "--input", path)
    expected = {
        "json": "not a .npy file",
        "objects": "Python objects",
        "truncated": "not a readable .npy array",
        "directory": "directory",
    }[kind]
    assert result.exit_code == 2 and expected in result.output
