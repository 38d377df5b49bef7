"""64-bit elements read as 32-bit pairs, as the DML302 and DML304 hints say, judged and run by the
real DirectML.dll at levels 2.1, 3.1 and 4.1 (marked ``directml_live``, like ``test_live.py``).

Each case: the descriptor as written (rejected where the level has no 64-bit type), the document
after following the hint (accepted, and its output the bytes of numpy.tile of the 64-bit values),
and the literal result of the older hint "one more innermost dimension of 2" (rejected where the
rank was already the level's largest).
"""

from __future__ import annotations

import numpy as np
import pytest

import dmltile
from dmltile.validate.fixes import apply_fix, wrapped
from dmltile.validate.rules.levels import as_pairs

from .generate_cases import load_oracle

pytestmark = pytest.mark.directml_live

ORACLE = load_oracle()
if ORACLE.find_setup() is None:
    pytest.skip(f"DirectML set-up absent: {ORACLE.setup_problem()}", allow_module_level=True)


def typed(dtype: str, sizes: list[int], repeats: list[int]) -> dict:
    outs = [s * r for s, r in zip(sizes, repeats, strict=True)]
    return {
        "InputTensor": {"DataType": dtype, "Sizes": sizes},
        "OutputTensor": {"DataType": dtype, "Sizes": outs},
        "Repeats": repeats,
    }


def followed(document: dict, level: str) -> dict:
    """The document after the hint: DML302's fix, or for a FLOAT64 the level takes, DML304's pairs."""
    report = dmltile.validate(document, level)
    edits = [e for i in report.issues for e in i.fix]
    if not edits:
        edits = as_pairs(wrapped(document), dmltile.parse_feature_level(level), dmltile.DataType.UINT32) or []
        assert any(i.code == "DML304" for i in report.issues), report
    return apply_fix(document, edits)


CASES = [  # DirectML version (its max level), dtype, Sizes, Repeats, whether the level takes the dtype
    ("1.0.2006.1020", "2.1", "INT64", [2, 2, 2, 3], [2, 2, 2, 2], False),
    ("1.5.0", "3.1", "INT64", [2, 3], [2, 2], False),
    ("1.5.0", "3.1", "INT64", [1, 1, 1, 1, 1, 1, 2, 3], [1, 1, 1, 1, 1, 1, 2, 2], False),
    ("1.7.0", "4.1", "FLOAT64", [1, 1, 1, 1, 1, 1, 2, 3], [1, 1, 1, 1, 1, 1, 2, 2], True),
]


@pytest.mark.parametrize("version,level,dtype,sizes,repeats,taken", CASES, ids=lambda v: str(v))
def test_the_pairs_hint_is_accepted_and_tiles_the_same_bytes(version, level, dtype, sizes, repeats, taken):
    document = typed(dtype, sizes, repeats)
    fixed = followed(document, level)
    assert dmltile.validate(fixed, level).valid
    older = typed("UINT32", [*sizes, 2], [*repeats, 1])  # the older hint taken literally
    x = (np.arange(np.prod(sizes), dtype=np.int64) * 0x100000001 - 7).reshape(sizes)
    cases = [
        {"id": "written", "desc": document},
        {"id": "followed", "desc": fixed, "execute": True, "input": x.tobytes()},
        {"id": "older", "desc": older},
    ]
    written, after, old = ORACLE.run_cases(cases, version)
    assert written["accepted"] is taken, written
    assert after["accepted"] and after.get("exec_stage") == "done", after
    want = np.tile(x, repeats).tobytes()
    assert after["output"][: len(want)] == want
    # where the rank was already the level's largest, one more axis is what DirectML rejects
    full = (
        len(sizes) + 1
        not in dmltile.tile_support(dmltile.parse_feature_level(level))
        .tensors["InputTensor"]
        .dimension_counts
    )
    assert old["accepted"] is not full, old


@pytest.mark.parametrize("version,level", [("1.0.2006.1020", "2.1"), ("1.5.0", "3.1"), ("1.7.0", "4.1")])
def test_a_mismatched_output_beside_a_64_bit_input_followed_once_is_accepted_and_tiles_the_same_bytes(
    version, level
):
    # DML206 and DML302 (where the level lacks FLOAT64) fixed together, the output's byte size written
    # for FLOAT32 [1,1,6,9]: every edit of the one report, in order, as the JSON contract gives them.
    document = typed("FLOAT64", [1, 1, 2, 3], [1, 1, 3, 3])
    document["OutputTensor"].update(DataType="DML_TENSOR_DATA_TYPE_FLOAT32", TotalTensorSizeInBytes=216)
    report = dmltile.validate(document, level)
    fixed = apply_fix(document, [e for i in report.issues for e in i.fix])
    assert dmltile.validate(fixed, level).valid, (report.issues, fixed)
    out = wrapped(fixed)["Desc"]["OutputTensor"]["Desc"]
    assert out["TotalTensorSizeInBytes"] == dmltile.calc_buffer_tensor_size(out["DataType"], out["Sizes"])
    x = np.linspace(-3.5, 7.25, 6).reshape(1, 1, 2, 3)
    [after] = ORACLE.run_cases(
        [{"id": "followed", "desc": fixed, "execute": True, "input": x.tobytes()}], version
    )
    if "DML306" in dmltile.validate(fixed, level, directml=version).codes:  # FLOAT64 kept, as 4.1 takes it
        assert after["accepted"] and after.get("exec_stage") == "CompileOperator", after
        return
    assert after["accepted"] and after.get("exec_stage") == "done", after
    want = np.tile(x, [1, 1, 3, 3]).tobytes()
    assert after["output"][: len(want)] == want
