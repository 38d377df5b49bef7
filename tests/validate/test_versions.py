"""``validate(desc, directml="1.9.1")``: answering as one measured DirectML version's CreateOperator.

The expected verdicts are DirectML's own, from tests/directml/golden (there checked case by case);
here each version behaviour is pinned on one hand-made descriptor.
"""

import re

import numpy as np
import pytest

import dmltile

# FLOAT32 [1,1,3,3] with a row stride of 2^31: the last element's index, 2^32 + 2, wraps in 32 bits
# to 2, so 12 bytes "suffice" for DirectML 1.12.0 and older; 1.13.1 and newer reject it.
WRAPPED = {
    "InputTensor": {
        "DataType": "FLOAT32",
        "Sizes": [1, 1, 3, 3],
        "Strides": [0, 0, 2**31, 1],
        "TotalTensorSizeInBytes": 12,
    },
    "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 3]},
    "Repeats": [1, 1, 1, 1],
}


@pytest.mark.parametrize(
    "version,valid",
    [
        ("1.5.1", True),
        ("1.8.0", True),
        ("1.9.1", True),
        ("1.12.0", True),
        ("1.13.1", False),
        ("1.15.4", False),
    ],
)
def test_the_32_bit_size_wrap_depends_on_the_directml_version(version, valid):
    report = dmltile.validate(WRAPPED, directml=version)
    assert report.valid == valid
    assert ("DML112" in report.codes) == valid and ("DML105" in report.codes) == (not valid)
    assert not dmltile.validate(WRAPPED).valid  # without a version: the real extent decides


def test_a_version_implies_its_max_level_and_refuses_a_higher_one():
    doc = dmltile.tile_desc([2, 3], [2, 2]).to_dict()
    assert dmltile.validate(doc, directml="1.9.1").feature_level.dotted == "5.0"
    assert dmltile.validate(doc, "3.1", directml="1.9.1").feature_level.dotted == "3.1"
    above = dmltile.validate(doc, "6.1", directml="1.9.1")
    assert not above.valid and above.codes == ["DML305"] and "5.0" in above.issues[0].message


def test_an_unknown_version_names_the_measured_ones():
    report = dmltile.validate(dmltile.tile_desc([2], [2]), directml="9.9")
    assert not report.valid and report.codes == ["DML305"] and "1.15.4" in report.issues[0].message


def test_min_feature_level_stays_within_the_version():
    float64 = dmltile.tile_desc([2, 3], [2, 2], "FLOAT64")
    assert dmltile.min_feature_level(float64, directml="1.9.1").dotted == "4.1"
    assert dmltile.min_feature_level(float64, directml="1.5.1") is None  # max level 3.1: no FLOAT64
    assert dmltile.min_feature_level(WRAPPED, directml="1.9.1").dotted == "1.0"
    assert dmltile.min_feature_level(WRAPPED) is None


def test_the_command_line_answers_as_a_version_too(tmp_path):
    from typer.testing import CliRunner

    from dmltile.cli import app

    path = tmp_path / "wrapped.json"
    path.write_text(dmltile.load(WRAPPED).to_json())
    old = CliRunner().invoke(app, ["validate", str(path), "--directml", "1.9.1"])
    assert old.exit_code == 0 and "DML112" in old.stdout and "DML_FEATURE_LEVEL_5_0" in old.stdout
    new = CliRunner().invoke(app, ["validate", str(path), "--directml", "1.15.4"])
    assert new.exit_code == 1 and "DML105" in new.stdout
    unknown = CliRunner().invoke(app, ["validate", str(path), "--directml", "0.1"])
    assert unknown.exit_code == 2 and "1.15.4" in unknown.stderr


def _followed(desc: dict, hint: str) -> dict:
    """The descriptor with the pairs hint's sentences applied: each tensor's UINT32 Sizes, the Repeats."""
    out = {k: dict(v) if isinstance(v, dict) else list(v) for k, v in desc.items()}
    for name, sizes in re.findall(
        r"(\w+Tensor): read the \w+ data as UINT32 pairs: Sizes \[([\d,]+)\]", hint
    ):
        out[name] = {"DataType": "UINT32", "Sizes": [int(s) for s in sizes.split(",")]}
    repeats = re.search(r"; Repeats \[([\d,]+)\]", hint)
    if repeats:
        out["Repeats"] = [int(s) for s in repeats.group(1).split(",")]
    return out


@pytest.mark.parametrize(
    ("version", "lead"), [("1.8.0", []), ("1.7.0", [1] * 6)], ids=["rank 2", "rank 8, the most 4.1 takes"]
)
def test_the_compile_time_refusals_hint_read_as_written_compiles_the_same_bytes(version, lead):
    # DML306 says the UINT32 pairs rewrite DML302 and DML304 say: followed, the version compiles it
    # (no DML306) and it tiles the same bytes; at rank 8 that doubles the innermost size, as no 9th fits.
    desc = {
        "InputTensor": {"DataType": "UINT64", "Sizes": [*lead, 2, 3]},
        "OutputTensor": {"DataType": "UINT64", "Sizes": [*lead, 4, 9]},
        "Repeats": [*lead, 2, 3],
    }
    hints = {i.hint for i in dmltile.validate(desc, directml=version).issues if i.code == "DML306"}
    assert len(hints) == 1
    after = _followed(desc, hints.pop())
    report = dmltile.validate(after, directml=version)
    assert report.valid and "DML306" not in report.codes, report.issues
    x = np.arange(6, dtype=np.uint64).reshape(*[1] * len(lead), 2, 3) * 0x1_0000_0001 + 7
    pairs = x.view(np.uint32).reshape(after["InputTensor"]["Sizes"])
    tiled = np.tile(pairs, after["Repeats"])
    assert np.array_equal(tiled.reshape(-1), np.tile(x, desc["Repeats"]).view(np.uint32).reshape(-1))
