"""Shared fixtures (the DirectML documentation's own example, as a canonical document) and the
summary of the golden tests' agreement with DirectML."""

import copy
import os
from typing import Any

import pytest
from hypothesis import settings

# CI (CI=true) runs every property test with a fixed seed, so a run's verdict is reproducible; local
# runs keep drawing fresh examples and remember failing ones in .hypothesis/.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# The golden tests report, as this property, [version, kind, cases agreeing, cases]. The summary is
# gathered here, in the top conftest: with pytest-xdist the main process only loads this one.
AGREEMENT = "directml_agreement"
SUMMARY: dict[str, dict[str, tuple[int, int]]] = {}


def pytest_runtest_logreport(report: Any) -> None:
    """Gather the agreement each golden test reports (here or in a worker process)."""
    for name, value in report.user_properties if report.when == "call" else ():
        if name == AGREEMENT:
            version, kind, agree, total = value
            SUMMARY.setdefault(version, {})[kind] = (agree, total)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print dmltile's agreement with each DirectML version, by kind of case."""
    table = SUMMARY
    if not table:
        return
    write = terminalreporter.write_line
    terminalreporter.section("dmltile vs DirectML CreateOperator (golden data)")
    for version, kinds in sorted(table.items(), key=lambda kv: tuple(int(x) for x in kv[0].split("."))):
        agree = sum(a for a, _ in kinds.values())
        total = sum(n for _, n in kinds.values())
        detail = ", ".join(f"{k} {a}/{n}" for k, (a, n) in kinds.items() if a != n)
        write(f"DirectML {version:8} {agree}/{total} agree" + (f"  (differ: {detail})" if detail else ""))


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
