"""Every rule code: triggered by one mutation of a valid document, at the right path,
with a message that names the field and the value, and not triggered by the valid neighbour."""

import json

import pytest

import dmltile
from dmltile.validate.rules import RULES

IN = ("Desc", "InputTensor", "Desc")
OUT = ("Desc", "OutputTensor", "Desc")


def at(doc, path):
    for key in path:
        doc = doc[key]
    return doc


def set_(path, key, value):
    return lambda d: at(d, path).__setitem__(key, value)


def drop(path, key):
    return lambda d: at(d, path).pop(key)


# code, mutation, feature level, expected path, text the message must contain
CASES = [
    ("DML001", "{not json", "6.4", "", "not JSON"),
    ("DML001", [1, 2], "6.4", "", "array"),
    ("DML002", drop(OUT, "DataType"), "6.4", "Desc.OutputTensor.Desc.DataType", "DataType"),
    ("DML002", drop(("Desc",), "Repeats"), "6.4", "Desc.Repeats", "Repeats"),
    ("DML003", set_(IN, "Stride", [6, 6, 3, 1]), "6.4", "Desc.InputTensor.Desc.Stride", '"Stride"'),
    ("DML004", set_(IN, "DimensionCount", -4), "6.4", "Desc.InputTensor.Desc.DimensionCount", "-4"),
    ("DML004", set_(IN, "DimensionCount", True), "6.4", "Desc.InputTensor.Desc.DimensionCount", "boolean"),
    (
        "DML004",
        set_(IN, "DimensionCount", 2**32),
        "6.4",
        "Desc.InputTensor.Desc.DimensionCount",
        "4294967296",
    ),
    (
        "DML004",
        set_(IN, "TotalTensorSizeInBytes", 2**64),
        "6.4",
        "Desc.InputTensor.Desc.TotalTensorSizeInBytes",
        "UINT64",
    ),
    ("DML004", set_(("Desc",), "Repeats", [1, 1, 3.5, 3]), "6.4", "Desc.Repeats[2]", "3.5"),
    ("DML004", set_(IN, "DimensionCount", None), "6.4", "Desc.InputTensor.Desc.DimensionCount", "null"),
    ("DML005", set_(IN, "DataType", "BOOL"), "6.4", "Desc.InputTensor.Desc.DataType", '"BOOL"'),
    ("DML005", set_(OUT, "Flags", 4), "6.4", "Desc.OutputTensor.Desc.Flags", "4"),
    (
        "DML101",
        lambda d: d["Desc"]["InputTensor"].__setitem__("Type", "DML_TENSOR_TYPE_INVALID"),
        "6.4",
        "Desc.InputTensor.Type",
        "INVALID",
    ),
    ("DML102", set_(IN, "DimensionCount", 5), "6.4", "Desc.InputTensor.Desc.DimensionCount", "5"),
    ("DML103", set_(IN, "Strides", [3, 1]), "6.4", "Desc.InputTensor.Desc.Strides", "[3, 1]"),
    (
        "DML104",
        lambda d: (at(d, IN)["Sizes"].__setitem__(2, 0), at(d, OUT)["Sizes"].__setitem__(2, 0)),
        "6.4",
        "Desc.InputTensor.Desc.Sizes[2]",
        "is 0",
    ),
    (
        "DML105",
        set_(OUT, "TotalTensorSizeInBytes", 212),
        "6.4",
        "Desc.OutputTensor.Desc.TotalTensorSizeInBytes",
        "216",
    ),
    (
        "DML106",
        set_(IN, "TotalTensorSizeInBytes", 25),
        "6.4",
        "Desc.InputTensor.Desc.TotalTensorSizeInBytes",
        "25",
    ),
    (
        "DML107",
        set_(IN, "GuaranteedBaseOffsetAlignment", 2),
        "6.4",
        "Desc.InputTensor.Desc.GuaranteedBaseOffsetAlignment",
        "2",
    ),
    (
        "DML107",
        set_(IN, "GuaranteedBaseOffsetAlignment", 24),
        "6.4",
        "Desc.InputTensor.Desc.GuaranteedBaseOffsetAlignment",
        "24",
    ),
    (
        "DML108",
        set_(IN, "TotalTensorSizeInBytes", 4 * 2**32),
        "6.4",
        "Desc.InputTensor.Desc.TotalTensorSizeInBytes",
        "4294967296",
    ),
    ("DML109", set_(OUT, "Strides", [54, 54, 0, 1]), "6.4", "Desc.OutputTensor.Desc.Strides", "stride 0"),
    (
        "DML109",
        set_(OUT, "Strides", [54, 54, 1, 1]),
        "6.4",
        "Desc.OutputTensor.Desc.Strides",
        "[54, 54, 1, 1]",
    ),
    (
        "DML110",
        set_(OUT, "Flags", "DML_TENSOR_FLAG_OWNED_BY_DML"),
        "6.4",
        "Desc.OutputTensor.Desc.Flags",
        "OWNED_BY_DML",
    ),
    ("DML201", set_(("Desc",), "RepeatsCount", 3), "6.4", "Desc.RepeatsCount", "3"),
    ("DML202", set_(("Desc",), "Repeats", [1, 1, 3, 3, 1]), "6.4", "Desc.Repeats", "5 values"),
    ("DML203", set_(("Desc",), "Repeats", [1, 1, 0, 3]), "6.4", "Desc.Repeats[2]", "is 0"),
    (
        "DML204",
        lambda d: (
            at(d, OUT).__setitem__("Sizes", [1, 6, 9]),
            at(d, OUT).__setitem__("DimensionCount", 3),
            at(d, OUT).__setitem__("TotalTensorSizeInBytes", 216),
        ),
        "6.4",
        "Desc.OutputTensor.Desc.Sizes",
        "3 dimensions",
    ),
    (
        "DML205",
        lambda d: at(d, OUT)["Sizes"].__setitem__(3, 8),
        "6.4",
        "Desc.OutputTensor.Desc.Sizes[3]",
        "is 8",
    ),
    ("DML206", set_(OUT, "DataType", "INT32"), "6.4", "Desc.OutputTensor.Desc.DataType", "INT32"),
    ("DML207", lambda d: d.__setitem__("Type", "DML_OPERATOR_GEMM"), "6.4", "Type", "GEMM"),
    ("DML301", None, "2.1", "Desc.InputTensor.Desc.DimensionCount", "6 dimensions"),
    ("DML302", set_(IN, "DataType", "INT8"), "1.0", "Desc.InputTensor.Desc.DataType", "INT8"),
    ("DML303", lambda d: None, "3.2", "feature_level", "3.2"),
    (
        "DML304",
        lambda d: [
            at(d, t).update(DataType="FLOAT64", TotalTensorSizeInBytes=n) for t, n in ((IN, 48), (OUT, 432))
        ],
        "6.4",
        "Desc.InputTensor.Desc.DataType",
        "FLOAT64",
    ),
    (
        "DML111",
        lambda d: (
            at(d, IN).update(Sizes=[1, 1, 1, 1], TotalTensorSizeInBytes=4),
            d["Desc"].update(Repeats=[1, 1, 3000, 3000]),
            at(d, OUT).update(
                Sizes=[1, 1, 3000, 3000], Strides=[0, 0, 2, 3001], TotalTensorSizeInBytes=36023992
            ),
        ),
        "6.4",
        "Desc.OutputTensor.Desc.Strides",
        "too large to prove",
    ),
]


def six_d(d):
    for path, sizes in ((IN, [1, 1, 1, 1, 2, 3]), (OUT, [1, 1, 1, 1, 6, 9])):
        at(d, path).update(Sizes=sizes, DimensionCount=6)
    d["Desc"].update(Repeats=[1, 1, 1, 1, 3, 3], RepeatsCount=6)


@pytest.mark.parametrize(
    "code,mutate,level,path,text", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_rule_fires_at_its_path(doc, code, mutate, level, path, text):
    assert dmltile.validate(
        doc, feature_level="6.4" if code == "DML303" else level
    ).valid  # the valid neighbour
    if isinstance(mutate, (str, list)):
        source = mutate if isinstance(mutate, str) else json.dumps(mutate)
    else:
        (mutate or six_d)(doc)
        source = doc
    report = dmltile.validate(source, feature_level=level)
    hits = [i for i in report.issues if i.code == code]
    assert hits, f"{code} not reported; got {report.codes}"
    assert any(i.path == path for i in hits), [i.path for i in hits]
    issue = next(i for i in hits if i.path == path)
    assert text in issue.message
    assert issue.hint, "every issue says what would make it valid"
    assert issue.severity == RULES[code].severity
    assert report.valid == (RULES[code].severity == "warning")


def test_every_design_code_has_a_rule_and_a_case():
    design = {
        f"DML{n:03d}"
        for n in (
            1,
            2,
            3,
            4,
            5,
            101,
            102,
            103,
            104,
            105,
            106,
            107,
            108,
            109,
            110,
            201,
            202,
            203,
            204,
            205,
            206,
            207,
            301,
            302,
            303,
            111,  # interleaved output strides too large to prove distinct (warning)
            304,  # FLOAT64: accepted by DirectML, not listed by the page (warning)
        )
    }
    dxdispatch_models = {"DML401", "DML402"}  # fired by DxDispatch models, tested in tests/interop
    directml_versions = {"DML112", "DML305", "DML306"}  # fired with directml=..., tested in test_versions.py
    measured = {
        "DML208"
    }  # what every DirectML measured accepts (tests/directml/test_golden.py, test_wrap.py)
    provider = {f"DML50{i}" for i in range(1, 9)}  # applied by check_model, tested in tests/lower
    assert set(RULES) == design | dxdispatch_models | directml_versions | measured | provider
    assert {c[0] for c in CASES} == design


def test_all_issues_are_collected_not_just_the_first(doc):
    at(doc, IN)["DimensionCount"] = 3
    at(doc, OUT)["DataType"] = "INT64"
    doc["Desc"]["Repeats"] = [1, 1, 0, 3]
    at(doc, OUT)["TotalTensorSizeInBytes"] = 54 * 8 + 1  # above the minimum, not a multiple of 4
    codes = set(dmltile.validate(doc, feature_level="3.1").codes)
    assert {"DML102", "DML203", "DML206", "DML106", "DML302"} <= codes


def test_parse_errors_are_all_collected(doc):
    at(doc, IN)["Sizes"] = [1, -1, "2", 3]
    at(doc, OUT)["DataType"] = "HALF"
    doc["Desc"]["Extra"] = 1
    issues = dmltile.validate(doc).issues
    assert [i.path for i in issues] == [
        "Desc.InputTensor.Desc.Sizes[1]",
        "Desc.InputTensor.Desc.Sizes[2]",
        "Desc.OutputTensor.Desc.DataType",
        "Desc.Extra",
    ]
    assert "FLOAT16" in issues[2].hint  # "HALF is spelled FLOAT16"


def test_typo_gets_a_did_you_mean(doc):
    doc["Desc"]["Repeat"] = doc["Desc"].pop("Repeats")
    hints = {i.code: i.hint for i in dmltile.validate(doc).issues}
    assert 'did you mean "Repeats"' in hints["DML003"]


def test_feature_level_hints_name_the_level_that_accepts(doc):
    at(doc, IN)["DataType"] = at(doc, OUT)["DataType"] = "UINT64"
    at(doc, IN)["TotalTensorSizeInBytes"] = 48
    at(doc, OUT)["TotalTensorSizeInBytes"] = 432
    report = dmltile.validate(doc, feature_level="3.1")
    assert report.codes == ["DML302", "DML302"]
    assert "DML_FEATURE_LEVEL_4_1 or later" in report.issues[0].hint
    assert dmltile.min_feature_level(doc).dotted == "4.1"


def test_float64_is_valid_from_4_1_with_a_warning_and_the_hint_below_says_what_to_do_instead():
    # DirectML 1.7.0 (max level 4.1) and later accept FLOAT64 Tile (measured); the Tile page does not list it.
    desc = dmltile.tile_desc([2, 3], [2, 2], "FLOAT64")
    report = dmltile.validate(desc)
    assert (
        report.valid and set(report.codes) == {"DML304"} and dmltile.min_feature_level(desc).dotted == "4.1"
    )
    assert set(dmltile.validate(desc, "4.1").codes) == {"DML304"}
    below = dmltile.validate(desc, "3.1")
    assert set(below.codes) == {"DML302"}
    hint = below.issues[0].hint
    assert "DML_FEATURE_LEVEL_4_1 or later" in hint and "2 UINT32 values" in hint
    assert "UINT64" not in hint  # no 64-bit type before 4.1


def test_4d_only_levels_suggest_padding(doc):
    report = dmltile.validate(dmltile.tile_desc([2, 3], [2, 2]), feature_level="1.0")
    assert "pad Sizes (and Repeats) with 2 leading 1s" in report.issues[0].hint


@pytest.mark.parametrize(
    "level,expected", [("FLOAT16", "1.0"), ("INT8", "2.1"), ("INT64", "4.1"), ("FLOAT64", "4.1")]
)
def test_min_feature_level_of_4d_types(level, expected):
    lv = dmltile.min_feature_level(dmltile.tile_desc([1, 1, 2, 3], [1, 1, 3, 3], level))
    assert (lv.dotted if lv else None) == expected


def test_min_feature_level_of_6d_float32():
    assert (
        dmltile.min_feature_level(dmltile.tile_desc([1, 2, 1, 2, 1, 3], [2, 1, 2, 1, 2, 1])).dotted == "3.1"
    )


def test_min_feature_level_of_a_broken_descriptor_is_none(doc):
    doc["Desc"]["Repeats"] = [1, 1, 0, 3]
    assert dmltile.min_feature_level(doc) is None


def test_check_returns_the_model_or_raises_with_every_issue(doc):
    assert dmltile.check(doc, "1.0") == dmltile.load(doc)
    at(doc, OUT)["Sizes"] = [1, 1, 6, 8]
    doc["Desc"]["Repeats"] = [1, 1, 3, 0]
    with pytest.raises(dmltile.DescriptorError) as e:
        dmltile.check(doc, "1.0")
    assert {i.code for i in e.value.issues} == {"DML203"}
    assert "DML203" in str(e.value) and "Repeats[3]" in str(e.value)
    assert isinstance(e.value, dmltile.DmlTileError) and isinstance(e.value, ValueError)


def test_warnings_do_not_make_a_descriptor_invalid(doc):
    at(doc, OUT)["TotalTensorSizeInBytes"] = 217
    report = dmltile.validate(doc)
    assert report.valid and report.warnings and not report.errors
    assert dmltile.check(doc) is not None


def test_large_interleaved_output_strides_are_a_warning_and_certain_aliasing_an_error():
    desc = dmltile.tile_desc([1, 1], [3000, 3000]).to_dict()
    out = desc["Desc"]["OutputTensor"]["Desc"]
    # Strides 2 and 3001 interleave (2 * 1501 == 3002 > 3001) over 9 million elements: too many to
    # enumerate, and the span (9,005,998 addresses) holds them all, so aliasing is not certain.
    out.update(Strides=[2, 3001], TotalTensorSizeInBytes=4 * (2999 * 2 + 2999 * 3001 + 1))
    report = dmltile.validate(desc)
    assert report.valid and report.codes == ["DML111"] and "too large to prove" in report.issues[0].message
    # Strides 2 and 3 cover only 14,996 addresses for 9 million elements: certain aliasing, DML109.
    out.update(Strides=[2, 3], TotalTensorSizeInBytes=4 * (2999 * 5 + 1))
    report = dmltile.validate(desc)
    assert not report.valid and report.codes == ["DML109"]


def test_validate_never_mutates_its_input(doc):
    before = json.dumps(doc, sort_keys=True)
    at(doc, IN).pop("TotalTensorSizeInBytes")
    snapshot = json.dumps(doc, sort_keys=True)
    dmltile.validate(doc)
    assert json.dumps(doc, sort_keys=True) == snapshot != before


# What CreateOperator answered for GuaranteedBaseOffsetAlignment (DirectML 1.8.0, 1.9.1, 1.15.4).
@pytest.mark.parametrize(
    "alignment,accepted",
    [(0, True), (16, True), (32, True), (64, True), (1024, True), (2**31, True)]
    + [(a, False) for a in (1, 2, 3, 4, 5, 8, 12, 17, 24)],
)
def test_alignment_follows_what_directml_accepts(doc, alignment, accepted):
    for t in (IN, OUT):
        at(doc, t)["GuaranteedBaseOffsetAlignment"] = alignment
    report = dmltile.validate(doc)
    assert report.valid == accepted and ("DML107" in report.codes) == (not accepted)


@pytest.mark.parametrize("total,valid,warned", [(23, False, False), (24, True, False), (25, True, True)])
def test_total_size_at_or_above_the_minimum_is_accepted_multiple_of_4_or_not(doc, total, valid, warned):
    at(doc, IN)["TotalTensorSizeInBytes"] = total
    report = dmltile.validate(doc)
    assert report.valid == valid and ("DML106" in report.codes) == warned
