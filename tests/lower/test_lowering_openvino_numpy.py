"""OpenVINO Tile-1 and numpy.tile lowered onto DirectML: spec examples, a naive reference, numpy.tile
itself (including where it raises) and OpenVINO itself when it is installed."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmltile
from dmltile import FrameworkError
from tests.lowering_support import FIXED_TYPES, random_array, same_bits

LEVELS = ["1.0", "2.1", "3.1", "4.1"]
INT_TYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def naive_openvino_tile(x: np.ndarray, repeats) -> np.ndarray:
    """OpenVINO Tile-1 by its page, element by element: promote ranks, clamp, out[i] = data[i mod dims]."""
    reps = [max(int(r), 0) for r in repeats]
    rank = max(x.ndim, len(reps))
    data = x.reshape((1,) * (rank - x.ndim) + x.shape)
    reps = [1] * (rank - len(reps)) + reps
    out = np.empty([d * r for d, r in zip(data.shape, reps, strict=False)], dtype=x.dtype)
    for index in itertools.product(*(range(n) for n in out.shape)):
        out[index] = data[tuple(i % d for i, d in zip(index, data.shape, strict=False))]
    return out


def _at_dispatch_level(plan):
    return (
        plan.at_level(plan.min_feature_level)
        if plan.status == "unsupported" and plan.min_feature_level
        else plan
    )


# -- OpenVINO: the three examples of the spec (seeds 000/002) ---------------------------------
@pytest.mark.parametrize(
    "shape, repeats, out",
    [
        ([2, 3, 4], [1, 2, 3], (2, 6, 12)),  # Example 1: as many repeats as data axes
        ([2, 3, 4], [5, 1, 2, 3], (5, 2, 6, 12)),  # Example 2: data promoted to (1, 2, 3, 4)
        ([5, 2, 3, 4], [1, 2, 3], (5, 2, 6, 12)),  # Example 3: repeats promoted to [1, 1, 2, 3]
        ([2, 3], [2, 2, 2], (2, 4, 6)),  # the short description's first bullet
        ([4, 2, 3], [2, 2], (4, 4, 6)),  # and its second
    ],
)
def test_openvino_spec_examples(shape, repeats, out):
    plan = dmltile.lower("openvino", shape, repeats, "float32", feature_level="1.0")
    assert plan.output_shape == out and plan.status == "dispatch"
    x = random_array(shape, "float32", np.random.default_rng(0))
    assert same_bits(plan.run(x), naive_openvino_tile(x, repeats))


@settings(max_examples=80, deadline=None)
@given(
    shape=st.lists(st.integers(0, 3), min_size=0, max_size=4),
    repeats=st.lists(st.integers(-2, 3), min_size=0, max_size=5),
    rtype=st.sampled_from(INT_TYPES),
    dtype=st.sampled_from(FIXED_TYPES[:13]),
    level=st.sampled_from(LEVELS),
)
def test_openvino_matches_the_naive_reference(shape, repeats, rtype, dtype, level):
    reps = (
        np.array(repeats, dtype=rtype)
        if rtype.startswith("int")
        else np.array([max(r, 0) for r in repeats], dtype=rtype)
    )
    x = random_array(shape, dtype, np.random.default_rng(len(shape)))
    plan = _at_dispatch_level(dmltile.lower("openvino", shape, reps, dtype, feature_level=level))
    expected = naive_openvino_tile(x, reps)
    assert plan.output_shape == expected.shape
    assert same_bits(plan.run(x), expected)
    if any(r < 0 for r in reps.tolist()):
        assert any("clamped negative repeats to 0" in s for s in plan.steps)


@pytest.mark.parametrize(
    "repeats, dtype, words",
    [
        (np.array([2.0, 2.0]), "float32", ["float64", "integer element type"]),
        (np.array([True, True]), "float32", ["bool", "integer element type"]),
        (np.array(2, dtype=np.int64), "float32", ["shape []", "rank 1"]),
        (np.array([[2, 2]], dtype=np.int32), "float32", ["shape [1, 2]", "rank 1"]),
        ([2, 2], "complex64", ["complex64", "not an OpenVINO element type"]),
        ([2**62, 2**62], "float32", ["overflows"]),
    ],
)
def test_openvino_rejections(repeats, dtype, words):
    with pytest.raises(FrameworkError) as e:
        dmltile.lower("openvino", [3, 4], repeats, dtype)
    assert all(w in str(e.value) for w in words), str(e.value)


# -- OpenVINO itself, when installed ------------------------------------------------------------
# OpenVINO runs in a child process: loaded into one process with onnxruntime, its CPU plugin
# crashed (SIGSEGV in infer) on this machine. Empty outputs are compared by OpenVINO's inferred
# shape (the data is empty anyway).
OPENVINO_CHILD = r"""
import pickle, sys
import numpy as np
import openvino as ov
from openvino import opset8 as ops
cases, results = pickle.load(open(sys.argv[1], "rb")), []
core = ov.Core()
for x, reps in cases:
    try:
        param = ops.parameter(list(x.shape), ov.Type(x.dtype))
        model = ov.Model([ops.tile(param, ops.constant(reps))], [param])
        shape = tuple(d.get_length() for d in model.output(0).get_partial_shape())
        # Shape inference only for empty outputs: running them corrupted the heap (OpenVINO 2026.4 CPU).
        y = np.asarray(core.compile_model(model, "CPU")([x])[0]) if all(shape) else np.empty(shape, x.dtype)
        results.append(("ok", y))
    except Exception as e:
        results.append(("error", str(e)))
pickle.dump(results, open(sys.argv[1], "wb"))
"""


def _openvino_results(tmp_path, cases):
    import pickle
    import subprocess
    import sys

    probe = subprocess.run([sys.executable, "-c", "import openvino"], capture_output=True, text=True)
    if probe.returncode:
        pytest.skip(
            "OpenVINO is not importable here ("
            + (probe.stderr.strip().splitlines() or ["?"])[-1]
            + "); pip install 'dmltile[openvino]' to run it"
        )
    path = tmp_path / "cases.pkl"
    path.write_bytes(pickle.dumps(cases))
    subprocess.run([sys.executable, "-c", OPENVINO_CHILD, str(path)], check=True, timeout=300)
    return pickle.loads(path.read_bytes())


def _random_openvino_cases(n: int):
    rng = np.random.default_rng(2024)
    cases = []
    for i in range(n):
        shape = tuple(int(d) for d in rng.integers(1, 4, size=rng.integers(1, 5)))
        rtype = ["int32", "int64", "int8", "uint8"][i % 4]
        low = 0 if rtype.startswith("u") else -1
        reps = rng.integers(low, 4, size=rng.integers(1, 6)).astype(rtype)
        dtype = ["float32", "int32", "uint8", "int64", "float16"][i % 5]
        # Small values: OpenVINO's CPU plugin computes int64 in int32 precision.
        cases.append((rng.integers(0, 100, size=shape).astype(dtype), reps))
    return cases


def test_openvino_itself_agrees(tmp_path):
    cases = _random_openvino_cases(60)
    for (x, reps), (kind, expected) in zip(cases, _openvino_results(tmp_path, cases), strict=False):
        assert kind == "ok", expected
        plan = _at_dispatch_level(dmltile.lower("openvino", x.shape, reps, x.dtype, feature_level="4.1"))
        assert plan.output_shape == expected.shape, (x.shape, reps)
        assert same_bits(plan.run(x), expected.astype(x.dtype))


def test_openvino_itself_rejects_what_we_reject(tmp_path):
    x = np.zeros((2, 3), np.float32)
    bad = [
        np.array([2.0, 1.0], dtype=np.float32),
        np.array(2, dtype=np.int64),
        np.array([[2, 2]], dtype=np.int64),
    ]
    for reps, (kind, message) in zip(bad, _openvino_results(tmp_path, [(x, r) for r in bad]), strict=False):
        with pytest.raises(FrameworkError):
            dmltile.lower("openvino", [2, 3], reps)
        assert kind == "error" and "Tile repeats must" in message


# -- numpy.tile: our rules against numpy.tile itself, errors included ----------------------------
reps_strategy = st.one_of(
    st.integers(-2, 3),
    st.lists(st.integers(-2, 3), min_size=0, max_size=5),
    st.lists(st.sampled_from([1.0, 2.0, 1, 2, True, False]), min_size=1, max_size=3),
)


@settings(max_examples=200, deadline=None)
@given(
    shape=st.lists(st.integers(0, 3), min_size=0, max_size=4),
    reps=reps_strategy,
    dtype=st.sampled_from(FIXED_TYPES + ("string", "datetime64[ns]", "V3")),
    level=st.sampled_from(LEVELS),
)
def test_numpy_tile_rules_match_numpy(shape, reps, dtype, level):
    x = (
        random_array(shape, dtype, np.random.default_rng(3))
        if dtype in FIXED_TYPES + ("string",)
        else np.random.default_rng(3)
        .integers(0, 256, size=tuple(shape) + (np.dtype(dtype).itemsize,), dtype=np.uint8)
        .view(dtype)
        .reshape(shape)
    )
    try:
        expected = np.tile(x, reps)
    except (ValueError, TypeError):
        with pytest.raises(FrameworkError):
            dmltile.lower("numpy", shape, reps, x.dtype, feature_level=level)
        return
    plan = _at_dispatch_level(dmltile.lower("numpy", shape, reps, x.dtype, feature_level=level))
    assert plan.output_shape == expected.shape
    if plan.status == "unsupported":
        assert dtype == "string" and expected.size
        with pytest.raises(dmltile.UnsupportedError):
            plan.run(x)
    else:
        assert same_bits(plan.run(x), expected)


def test_numpy_tile_negative_repeat_on_an_empty_axis_is_allowed_like_numpy():
    x = np.zeros((0, 3), np.float32)
    assert dmltile.lower("numpy", [0, 3], [-1, 2]).output_shape == np.tile(x, [-1, 2]).shape == (0, 6)
    with pytest.raises(FrameworkError, match="negative dimensions are not allowed"):
        dmltile.lower("numpy", [0, 3], [2, -1])


def test_numpy_too_big_is_numpys_error():
    with pytest.raises(FrameworkError, match="array is too big"):
        dmltile.lower("numpy", [2**31, 2], [2**31, 2])
