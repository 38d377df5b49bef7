"""core/layout: the byte-layout formulas against hand-computed cases and a naive walk over every index."""

import ast
import itertools
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dmltile.core import layout
from dmltile.core.enums import DataType

LAYOUT_FILE = Path(layout.__file__)


def naive_last_index(sizes, strides):
    """The largest element index any logical index reaches, by visiting every index."""
    return max(
        sum(i * s for i, s in zip(index, strides, strict=True))
        for index in itertools.product(*(range(n) for n in sizes))
    )


def test_layout_imports_only_the_standard_library():
    # The DirectML runner's driver loads this module without dmltile, numpy or pydantic.
    tree = ast.parse(LAYOUT_FILE.read_text())
    imported = {
        (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    assert imported <= {"__future__", "copy", "collections.abc", "typing"}


def test_data_type_table_is_the_enum():
    assert layout.DATA_TYPE_VALUES == {m.name: m.value for m in DataType}
    assert [DataType(v).bits for v in range(14)] == [0, 32, 16, 32, 16, 8, 32, 16, 8, 64, 64, 64, 4, 4]
    assert layout.element_bits(14) == 0


@pytest.mark.parametrize(
    "dtype,sizes,strides,expected",
    [
        (1, [1, 1, 2, 3], None, 24),
        (5, [3], None, 4),  # 3 bytes -> 4
        (12, [3], None, 4),  # UINT4: 12 bits -> 2 bytes -> 4
        (13, [2, 5], [10, 1], 8),  # INT4: last index 14, 15 * 4 bits = 60 bits -> 8 bytes
        (1, [2, 3], [4, 1], 28),
        (1, [2, 0], None, 0),
        (0, [2, 3], None, 0),  # UNKNOWN: the helper's "invalid data type" answer
    ],
)
def test_calc_buffer_tensor_size_by_hand(dtype, sizes, strides, expected):
    assert layout.calc_buffer_tensor_size(dtype, sizes, strides) == expected


def test_calc_buffer_tensor_size_rejects_strides_of_the_wrong_length():
    with pytest.raises(ValueError, match="1 strides for 2 sizes"):
        layout.calc_buffer_tensor_size(1, [2, 3], [1])


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4)


@given(shapes, st.data(), st.sampled_from(sorted(layout.ELEMENT_BITS)))
def test_size_is_the_last_index_in_bits_rounded_to_4(sizes, data, dtype):
    strides = data.draw(st.lists(st.integers(0, 7), min_size=len(sizes), max_size=len(sizes)))
    bits = layout.ELEMENT_BITS[dtype]
    unrounded = -(-(naive_last_index(sizes, strides) + 1) * bits // 8)
    size = layout.calc_buffer_tensor_size(dtype, sizes, strides)
    assert size % 4 == 0 and unrounded <= size < unrounded + 4
    packed = layout.calc_buffer_tensor_size(dtype, sizes)
    assert packed == layout.calc_buffer_tensor_size(dtype, sizes, layout.packed_strides(sizes))


@given(shapes)
def test_packed_strides_visit_each_element_once(sizes):
    strides = layout.packed_strides(sizes)
    offsets = sorted(
        sum(i * s for i, s in zip(index, strides, strict=True))
        for index in itertools.product(*(range(n) for n in sizes))
    )
    assert offsets == list(range(len(offsets)))


def test_strides_or_packed():
    assert layout.strides_or_packed([2, 3], [5, 1]) == (5, 1)
    assert layout.strides_or_packed([2, 3], [1]) == (3, 1)
    assert layout.strides_or_packed([2, 3], None) == (3, 1)


def test_wrapped_size_wraps_the_index_and_optionally_the_bytes():
    # FLOAT32 [1,1,3,3] strides [0,0,2^31,1]: index 2^32 + 2 wraps to 2 -> 3 elements -> 12 bytes.
    big = [0, 0, 1 << 31, 1]
    assert layout.wrapped_buffer_tensor_size(1, [1, 1, 3, 3], big, wrap_bytes=False) == 12
    assert layout.calc_buffer_tensor_size(1, [1, 1, 3, 3], big) == ((1 << 32) + 3) * 4
    # [1,1,2,3]: index 2^31 + 2 fits, its bytes (2^31 + 3) * 4 do not: 12 after the byte wrap.
    assert layout.wrapped_buffer_tensor_size(1, [1, 1, 2, 3], big, wrap_bytes=True) == 12
    assert layout.wrapped_buffer_tensor_size(1, [1, 1, 2, 3], big, wrap_bytes=False) == ((1 << 31) + 3) * 4
    # below the wrap both agree, 4-bit types included
    assert layout.wrapped_buffer_tensor_size(12, [3], None, wrap_bytes=True) == 4
    assert layout.wrapped_buffer_tensor_size(1, [2, 0], None, wrap_bytes=True) == 0


def test_wrapping_a_bare_document():
    bare = {
        "InputTensor": {"DataType": "FLOAT32", "Sizes": [1]},
        "OutputTensor": {"Desc": {}},
        "Repeats": [1],
    }
    doc = layout.wrap_document(bare)
    assert doc == {
        "Type": "DML_OPERATOR_TILE",
        "Desc": {
            "InputTensor": {"Type": "DML_TENSOR_TYPE_BUFFER", "Desc": {"DataType": "FLOAT32", "Sizes": [1]}},
            "OutputTensor": {"Desc": {}},
            "Repeats": [1],
        },
    }
    doc["Desc"]["InputTensor"]["Desc"]["Sizes"].append(2)
    assert bare["InputTensor"]["Sizes"] == [1]  # a copy
    assert layout.wrap_document(doc) == doc  # already canonical
    assert layout.wrap_tensor({"Type": 0, "Sizes": [1]}) == {"Type": 0, "Desc": {"Sizes": [1]}}
    assert layout.wrap_operator([1]) == [1] and layout.wrap_tensor("x") == "x"
