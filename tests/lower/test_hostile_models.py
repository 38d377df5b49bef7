"""check_model() on hostile ONNX models built with onnx.helper: an invalid verdict or InputError,
never an internal error, and external data never read from outside the model's folder (a model
file is untrusted input: it must not make dmltile read other files); plus a hypothesis fuzz of
check_model over random initializers, names and graph shapes."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dmltile.errors import DmlTileError, InputError
from dmltile.lower.model_check import check_model
from tests.cli_support import script

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def _model(repeats_init, name="tile", shape=(2, 3), extra_nodes=()):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    node = helper.make_node("Tile", ["x", "r"], ["y"], name=name)
    graph = helper.make_graph([node, *extra_nodes], "g", [x], [y], initializer=[repeats_init])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def _external(location: str, length: int | None = None) -> TensorProto:
    t = TensorProto(name="r", data_type=TensorProto.INT64, dims=[2])
    t.data_location = TensorProto.EXTERNAL
    entry = t.external_data.add()
    entry.key, entry.value = "location", location
    if length is not None:
        entry = t.external_data.add()
        entry.key, entry.value = "length", str(length)
    return t


def _only(reports):
    assert len(reports) == 1
    return reports[0]


@pytest.mark.parametrize("location", ["../secret.bin", "/etc/passwd", "sub/../../secret.bin"])
def test_external_data_outside_the_model_folder_is_invalid_and_never_read(tmp_path, location):
    (tmp_path / "secret.bin").write_bytes(np.array([7, 7], np.int64).tobytes())
    folder = tmp_path / "model"
    folder.mkdir()
    onnx.save(_model(_external(location)), folder / "m.onnx")
    r = _only(check_model(folder / "m.onnx"))
    assert r.status == "invalid" and "outside the model's folder" in r.reason
    assert r.repeats is None


def test_external_data_inside_the_folder_is_read(tmp_path):
    (tmp_path / "r.bin").write_bytes(np.array([2, 3], np.int64).tobytes())
    onnx.save(_model(_external("r.bin")), tmp_path / "m.onnx")
    r = _only(check_model(tmp_path / "m.onnx"))
    assert r.status == "dispatch" and r.repeats == [2, 3] and r.output_shape == [4, 9]


def test_a_model_proto_with_external_data_is_not_resolved_against_the_current_directory(
    tmp_path, monkeypatch
):
    (tmp_path / "r.bin").write_bytes(np.array([2, 3], np.int64).tobytes())
    monkeypatch.chdir(tmp_path)  # the file is right there, but a ModelProto has no folder
    r = _only(check_model(_model(_external("r.bin"))))
    assert r.status == "invalid" and "ModelProto has no folder" in r.reason


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_external_data_that_is_a_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "r.bin")
    onnx.save(_model(_external("r.bin")), tmp_path / "m.onnx")
    r = _only(check_model(tmp_path / "m.onnx"))
    assert r.status == "invalid" and "not a regular file" in r.reason


def test_external_data_past_the_end_of_its_file_is_invalid(tmp_path):
    (tmp_path / "r.bin").write_bytes(b"\0" * 8)
    onnx.save(_model(_external("r.bin", length=16)), tmp_path / "m.onnx")
    r = _only(check_model(tmp_path / "m.onnx"))
    assert r.status == "invalid" and "lies outside" in r.reason


def test_a_scalar_repeats_initializer_is_invalid():
    r = _only(check_model(_model(numpy_helper.from_array(np.array(3, np.int64), "r"))))
    assert r.status == "invalid" and "1-D" in r.reason


def test_an_initializer_with_dims_but_no_data_is_invalid():
    r = _only(check_model(_model(TensorProto(name="r", data_type=TensorProto.INT64, dims=[2]))))
    assert r.status == "invalid" and "cannot be read" in r.reason


def test_a_node_name_that_is_not_utf8_is_shown_escaped(tmp_path):
    model = _model(numpy_helper.from_array(np.array([1, 2], np.int64), "r"), name="NODEXX")
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString().replace(b"NODEXX", b"NOD\xff\xfeX"))
    r = _only(check_model(path))
    assert r.status == "dispatch" and r.name == "NOD\\xff\\xfeX"
    done = script("check", path, "--json")
    assert done.returncode == 0 and "internal error" not in done.stderr


@pytest.mark.parametrize("content", [b"", b"\x00" * 64, b"not a model", bytes(range(256))])
def test_bytes_that_are_no_model_are_input_errors(tmp_path, content):
    path = tmp_path / "m.onnx"
    path.write_bytes(content)
    with pytest.raises(InputError):
        check_model(path)


def test_special_files_are_refused(tmp_path):
    with pytest.raises(InputError, match="directory"):
        check_model(tmp_path)
    if os.path.exists("/dev/zero"):
        with pytest.raises(InputError, match="not a regular file"):
            check_model("/dev/zero")
    with pytest.raises(InputError, match="got object"):
        check_model(object())


# -- fuzz: random initializers, names and inputs --------------------------------------------
ELEM_TYPES = [TensorProto.INT64, TensorProto.INT32, TensorProto.FLOAT, TensorProto.STRING, 0, 999]


RAW = [
    b"",
    b"\x01",
    np.array([2, 3], np.int64).tobytes(),
    np.array([-1, 0], np.int64).tobytes(),
    b"\xff" * 13,
]
INT64S = [[], [1], [2, 3], [-1, 5], [0, 0], [2**63 - 1, 2], [1, 1, 1, 1]]
LOCATIONS = ["../x", "/etc/passwd", "r.bin", "", "a\\b", "sub/../r.bin"]
NAMES = ["", "tile", "t\u00e9", "\x00", "a/b"]


def _initializer(elem, dims, kind, payload, location) -> TensorProto:
    t = TensorProto(name="r", data_type=elem)
    t.dims.extend(dims)
    if kind == "raw":
        t.raw_data = RAW[payload % len(RAW)]
    elif kind == "int64_data":
        t.int64_data.extend(INT64S[payload % len(INT64S)])
    elif kind == "external":
        t.data_location = TensorProto.EXTERNAL
        for key, value in (("location", location), ("offset", str(payload - 2)), ("length", str(payload))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
    return t


hostile_models = st.builds(
    lambda elem, dims, kind, payload, location, name, shape, opset: _with_opset(
        _model(_initializer(elem, dims, kind, payload, location), name=name, shape=shape), opset
    ),
    st.sampled_from(ELEM_TYPES),
    st.lists(st.integers(-3, 5), max_size=3),
    st.sampled_from(["raw", "int64_data", "none", "external"]),
    st.integers(0, 20),
    st.sampled_from(LOCATIONS),
    st.sampled_from(NAMES),
    st.lists(st.integers(0, 4), max_size=4),
    st.sampled_from([5, 13, 21]),
)


def _with_opset(model, opset: int):
    model.opset_import[0].version = opset
    return model


# 500 examples of 4 models each: 2,000 models, with a quarter of hypothesis's per-example overhead.
FUZZ = settings(
    max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@FUZZ
@given(
    cases=st.lists(st.tuples(hostile_models, st.sampled_from(["1.0", "3.1", "6.4"])), min_size=4, max_size=4)
)
def test_check_model_fuzz_never_crashes(cases):
    for model, level in cases:
        try:
            reports = check_model(model, level)
        except DmlTileError:
            continue
        for r in reports:
            assert r.status in ("dispatch", "dispatch-per-value", "empty", "cpu-fallback", "invalid")
            r.to_dict()
