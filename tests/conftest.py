"""Shared fixtures: the DirectML documentation's own example, as a canonical document."""

import copy
import os

import pytest
from hypothesis import settings

# CI (CI=true) runs every property test with a fixed seed, so a run's verdict is reproducible; local
# runs keep drawing fresh examples and remember failing ones in .hypothesis/.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

DOC_EXAMPLE = {
    "Type": "DML_OPERATOR_TILE",
    "Desc": {
        "InputTensor": {
            "Type": "DML_TENSOR_TYPE_BUFFER",
            "Desc": {
                "DataType": "DML_TENSOR_DATA_TYPE_FLOAT32",
                "Flags": "DML_TENSOR_FLAG_NONE",
                "DimensionCount": 4,
                "Sizes": [1, 1, 2, 3],
                "Strides": None,
                "TotalTensorSizeInBytes": 24,
                "GuaranteedBaseOffsetAlignment": 0,
            },
        },
        "OutputTensor": {
            "Type": "DML_TENSOR_TYPE_BUFFER",
            "Desc": {
                "DataType": "DML_TENSOR_DATA_TYPE_FLOAT32",
                "Flags": "DML_TENSOR_FLAG_NONE",
                "DimensionCount": 4,
                "Sizes": [1, 1, 6, 9],
                "Strides": None,
                "TotalTensorSizeInBytes": 216,
                "GuaranteedBaseOffsetAlignment": 0,
            },
        },
        "RepeatsCount": 4,
        "Repeats": [1, 1, 3, 3],
    },
}


@pytest.fixture
def doc():
    """A fresh, mutable copy of the doc example (written by hand from the DirectML page)."""
    return copy.deepcopy(DOC_EXAMPLE)
