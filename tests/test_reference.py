"""dmltile.execute.reference, the per-element definition of Tile: hand-computed cases, numpy.tile on
arrays of every type, strided and aliasing buffers, its size limit, and its use by compare_backends."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.errors import UnsupportedError
from dmltile.execute.buffers import POISON_BYTE
from dmltile.execute.reference import MAX_REFERENCE_ELEMENTS, ReferenceTile, source_index
from tests.exec_reference import DTYPES


def test_a_hand_computed_tile():
    op = ReferenceTile(dmltile.tile_desc([2, 2], [1, 2], dtype="UINT8"))
    x = np.array([[1, 2], [3, 4]], np.uint8)
    assert op(x).tolist() == [[1, 2, 1, 2], [3, 4, 3, 4]]
    assert source_index((1, 3), (2, 2)) == (1, 1)


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 3), min_size=1, max_size=4),
    data=st.data(),
    dtype=st.sampled_from(sorted(DTYPES)),
)
def test_arrays_tile_like_numpy_bit_for_bit(shape, data, dtype):
    repeats = data.draw(st.lists(st.integers(1, 3), min_size=len(shape), max_size=len(shape)))
    width = np.dtype(DTYPES[dtype]).itemsize
    bits = np.random.default_rng(len(shape)).integers(0, 256, size=(*shape, width), dtype=np.uint8)
    x = bits.view(DTYPES[dtype]).reshape(shape)  # any bit pattern: NaN payloads, -0.0, subnormals
    y = ReferenceTile(dmltile.tile_desc(shape, repeats, dtype=dtype))(x)
    assert y.tobytes() == np.tile(x, repeats).tobytes()


def strided_desc() -> dict:
    """UINT16 [2] read with stride 2 (a gap after each element), tiled 2x into [2,2] with output
    strides [3,1]: each output row has one padding element after it."""
    return {
        "InputTensor": {
            "DataType": "UINT16",
            "Sizes": [1, 2],
            "Strides": [4, 2],
            "TotalTensorSizeInBytes": 8,
        },
        "OutputTensor": {
            "DataType": "UINT16",
            "Sizes": [2, 2],
            "Strides": [3, 1],
            "TotalTensorSizeInBytes": 12,
        },
        "Repeats": [2, 1],
    }


def test_strided_buffers_are_read_and_written_through_their_strides():
    in_buf = bytes([0x11, 0x22, 0xEE, 0xEE, 0x33, 0x44, 0xEE, 0xEE])
    out = bytearray([0x55]) * 14  # two bytes past TotalTensorSizeInBytes
    ReferenceTile(strided_desc()).run_buffers(in_buf, out)
    row = [0x11, 0x22, 0x33, 0x44]
    assert list(out) == row + [0x55, 0x55] + row + [0x55] * 4


def test_poison_padding_marks_the_unaddressed_bytes_inside_the_buffer_only():
    in_buf = bytes([0x11, 0x22, 0xEE, 0xEE, 0x33, 0x44, 0xEE, 0xEE])
    out = bytearray([0x55]) * 14
    ReferenceTile(strided_desc()).run_buffers(in_buf, out, poison_padding=True)
    row = [0x11, 0x22, 0x33, 0x44]
    assert list(out) == row + [POISON_BYTE] * 2 + row + [POISON_BYTE] * 2 + [0x55] * 2


def test_aliasing_output_elements_keep_the_last_write_in_row_major_order():
    desc = {
        "InputTensor": {"DataType": "UINT8", "Sizes": [3]},
        "OutputTensor": {"DataType": "UINT8", "Sizes": [3], "Strides": [0], "TotalTensorSizeInBytes": 4},
        "Repeats": [1],
    }
    out = bytearray(4)
    ReferenceTile(desc).run_buffers(bytes([7, 8, 9, 0]), out)
    assert list(out) == [9, 0, 0, 0]


def test_a_huge_output_is_refused_with_the_limit_named():
    op = ReferenceTile(dmltile.tile_desc([1, 1], [1024, 1025], dtype="UINT8"))
    assert 1024 * 1025 > MAX_REFERENCE_ELEMENTS
    with pytest.raises(UnsupportedError, match=f"1049600 output elements.*at most {MAX_REFERENCE_ELEMENTS}"):
        op(np.zeros((1, 1), np.uint8))


def test_compare_backends_takes_the_definition_as_a_backend():
    desc = dmltile.tile_desc([2, 3], [2, 2], dtype="FLOAT16")
    raw = np.array([[0x3C00, 0x7D55, 0x7C01], [0x0001, 0x8000, 0xFE12]], dtype=np.uint16)
    result = dmltile.compare_backends(desc, raw.view(np.float16), backends=("numpy", "reference"))
    assert result.identical and result.backends == ("numpy", "reference") and result.expected is None


def test_a_difference_names_what_the_definition_puts_there():
    pytest.importorskip("onnxruntime")
    # float16 NaN payloads: a pure copy keeps them; onnxruntime's CPU float16 kernel may quiet them.
    raw = np.array([[0x3C00, 0x7D55, 0x7C01], [0x0001, 0x8000, 0xFE12]], dtype=np.uint16)
    desc = dmltile.tile_desc([2, 3], [2, 2], dtype="FLOAT16")
    result = dmltile.compare_backends(desc, raw.view(np.float16), backends=("reference", "onnxruntime"))
    if result.identical:
        assert result.expected is None
        return
    assert result.index is not None
    source = source_index(result.index, raw.shape)
    assert result.expected.view(np.uint16) == raw[source]
    assert result.values[0].view(np.uint16) == raw[source]  # the definition is the first backend
    assert result.message.endswith(
        f"Tile copies input [{','.join(map(str, source))}] there: nan(0x{raw[source]:04x})"
    )
