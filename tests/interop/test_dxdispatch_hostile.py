"""DxDispatch models that DxDispatch itself would reject give DmlTileError naming the field, never
a raw Python error or a huge allocation; plus a hypothesis fuzz of expected_outputs and
from_dxdispatch over mutated exported models: a model file is untrusted input."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.errors import DmlTileError
from dmltile.interop import dxdispatch_export as dx
from dmltile.interop import dxdispatch_run

BASE = dx.to_dxdispatch(dmltile.tile_desc([2, 3], [2, 2], dtype="INT8"))


def _mutated(path: tuple, value):
    model = copy.deepcopy(BASE)
    parent = model
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return model


@pytest.mark.parametrize(
    "path, value, text",
    [
        (("resources",), None, '"resources" is'),
        (("resources", "output", "initialValues", "valueCount"), -1, "valueCount is -1"),
        (("resources", "output", "initialValues", "value"), -3e20, "must be a JSON integer"),
        (("resources", "output", "initialValues", "value"), -(3 * 10**20), "does not fit int8"),
        (("resources", "output", "initialValues", "valueCount"), 2**62, "too large to simulate"),
        (("resources", "input", "sizeInBytes"), -4, "sizeInBytes is -4"),
        (("resources", "input", "sizeInBytes"), 2, "too small"),
        (("resources", "output"), "x", "not an object"),
        (("commands",), None, '"commands" must be an array'),
        (("commands", 0, "bindings"), [1], "bindings is"),
        (
            ("commands", 0, "bindings", "InputTensor"),
            {"name": "input", "elementOffset": -2},
            "elementOffset is -2",
        ),
        (("commands", 0, "bindings", "InputTensor"), {"name": "input", "elementOffset": 1}, "run past"),
        (("commands", 0, "bindings", "InputTensor"), {"name": "nope"}, "does not define"),
        (("commands", 1, "resource"), ["output"], "does not define"),
    ],
)
def test_a_model_dxdispatch_would_reject_is_a_library_error(path, value, text):
    with pytest.raises(DmlTileError, match=text):
        dx.expected_outputs(_mutated(path, value))


def test_a_two_to_the_40_bytes_resource_is_not_allocated_whole(monkeypatch):
    model = _mutated(("resources", "output", "sizeInBytes"), 2**40)
    sizes = []
    real = np.zeros

    def counting_zeros(shape, *args, **kwargs):
        sizes.append(int(np.prod(shape)))
        return real(shape, *args, **kwargs)

    monkeypatch.setattr(dxdispatch_run.np, "zeros", counting_zeros)
    shown = dx.expected_outputs(model)
    assert (
        shown["output"].tolist()
        == np.tile(np.arange(1, 7, dtype=np.int8).reshape(2, 3), (2, 2)).ravel().tolist()
    )
    assert max(sizes) < 1024


def test_from_dxdispatch_on_hostile_text_is_a_library_error():
    for text in ['{"dispatchables": null}', '{"dispatchables": {"t": 1}}', "[", '{"dispatchables": []}']:
        try:
            dmltile.from_dxdispatch(text)
        except DmlTileError:
            pass


# -- fuzz ----------------------------------------------------------------------------------
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.sampled_from(["", "nan", "inf", "-inf", "output", "input", "tile", "FLOAT32", "INT8", "UINT64"]),
    st.lists(st.integers(-300, 300), max_size=6),
    st.dictionaries(
        st.sampled_from(["name", "elementOffset", "valueCount", "value", "valueStart", "valueDelta"]),
        st.integers(-5, 40) | st.floats(allow_nan=True) | st.none(),
        max_size=3,
    ),
)


def _paths(node, prefix=()):
    if isinstance(node, dict):
        items = node.items()
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return
    for key, value in items:
        yield prefix + (key,)
        yield from _paths(value, prefix + (key,))


PATHS = list(_paths(BASE))


@st.composite
def mutated_models(draw):
    model = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS))
        parent = model
        try:
            for key in path[:-1]:
                parent = parent[key]
            if draw(st.booleans()) and isinstance(parent, dict):
                parent.pop(path[-1], None)
            else:
                parent[path[-1]] = draw(VALUES)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation replaced the path
    return model


# 500 examples of 4 models each: 2,000 models, with a quarter of hypothesis's per-example overhead.
FUZZ = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MODELS = st.lists(mutated_models(), min_size=4, max_size=4)


@FUZZ
@given(models=MODELS)
def test_expected_outputs_fuzz_never_crashes(models):
    for model in models:
        try:
            shown = dx.expected_outputs(model)
        except DmlTileError:
            continue
        for values in shown.values():
            assert isinstance(values, np.ndarray)


@FUZZ
@given(models=MODELS)
def test_from_dxdispatch_fuzz_never_crashes(models):
    for model in models:
        try:
            imported = dmltile.from_dxdispatch(json.dumps(model, allow_nan=True))
        except DmlTileError:
            continue
        for name in imported.tile_names:
            imported.reports("4.1")[name]
