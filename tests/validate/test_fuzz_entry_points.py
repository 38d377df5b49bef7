"""The Python entry points never raise anything but DmlTileError on arbitrary input: 2,000 cases
each of arbitrary JSON-like values, text and bytes through validate, load, min_feature_level and
tile_desc. The CLI's fuzz (tests/cli/test_cli_fuzz.py) covers the commands."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.errors import DmlTileError

KEYS = st.sampled_from(
    ["Type", "Desc", "InputTensor", "OutputTensor", "Repeats", "Sizes", "Strides", "DataType", "dispatchables",
     "type", "desc", "resources", "commands", "TotalTensorSizeInBytes", "x"]
)  # fmt: skip
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True)
    | st.text(max_size=8)
    | st.sampled_from(["FLOAT32", "TILE", "DML_OPERATOR_TILE", "UINT8", "BUFFER"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(KEYS | st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=16,
)
SOURCES = st.one_of(
    VALUES,
    VALUES.map(lambda v: json.dumps(v, allow_nan=True)),
    st.text(max_size=30),
    st.binary(max_size=30),
    st.builds(bytearray, st.binary(max_size=10)),
    st.sampled_from([object(), "\x00", "\ud800", b"\xff", "[" * 3000, {1: 2}, (1,)]),
)
# 500 examples of 4 cases each: 2,000 cases per entry point, with a quarter of hypothesis's
# per-example overhead (the calls themselves are cheap and in-process).
PER_EXAMPLE = 4
FUZZ = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def batch(strategy):
    return st.lists(strategy, min_size=PER_EXAMPLE, max_size=PER_EXAMPLE)


@FUZZ
@given(cases=batch(st.tuples(SOURCES, st.sampled_from(["1.0", "4.1", "9.9", 3.1, None]))))
def test_validate_fuzz_returns_a_report_or_a_library_error(cases):
    for source, level in cases:
        try:
            report = dmltile.validate(source, level)
        except DmlTileError:
            continue
        assert report.valid in (True, False)
        json.loads(report.to_json())


@FUZZ
@given(sources=batch(SOURCES))
def test_load_and_min_feature_level_fuzz_raise_only_library_errors(sources):
    for source in sources:
        try:
            dmltile.load(source)
        except DmlTileError:
            pass
        try:
            dmltile.min_feature_level(source)
        except DmlTileError:
            pass


TILE_ARGS = st.tuples(
    st.lists(st.integers(-3, 2**33) | st.sampled_from(["a", None, 1.5, True]), max_size=9),
    st.lists(st.integers(-3, 2**33) | st.sampled_from(["a", None, 2.0]), max_size=9),
    st.sampled_from(["FLOAT32", "INT8", "BOOL", 3, None, "UINT64"]),
)


@FUZZ
@given(cases=batch(TILE_ARGS))
def test_tile_desc_fuzz_raises_only_library_errors(cases):
    for sizes, repeats, dtype in cases:
        try:
            desc = dmltile.tile_desc(sizes, repeats, dtype=dtype)
        except DmlTileError:
            continue
        assert list(desc.output.sizes) == [s * r for s, r in zip(sizes, repeats, strict=True)]
