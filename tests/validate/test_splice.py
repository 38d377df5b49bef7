"""``validate --fix`` writes the user's file back with only the fixed values changed.

The fixed document is spliced into the text it was read from: key order, comments, spacing and
every value no fix touched stay as written. The reference is the fix made on the parsed document
(``apply_all``, repeated as ``--fix`` repeats it): the text written must read back as exactly that.
"""

from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.validate.fixes import wrapped
from dmltile.validate.locate import spans
from dmltile.validate.source import strip_jsonc
from dmltile.validate.splice import keep_layout
from tests.validate.test_fixes import UNFIXABLE, _tensor, valid_documents
from tests.validate.test_hints_keep_data import BROKEN, fix_all

from ..cli_support import invoke

JSONC = """\
// a Tile descriptor kept by hand
{
  "Repeats": [2, 3], /* rows, then columns */
  "OutputTensor": {
    "Sizes": [4, 8],   // one column short
    "DataType": "FLOAT32",
  },
  "InputTensor": {"Sizes": [2, 3], "DataType": "float"},
}
"""


MODEL = """\
// a DxDispatch model kept by hand
{
    "resources":
    {
        "input":  { "initialValuesDataType": "FLOAT32",
                    "initialValues": { "valueCount": 6, "valueStart": 1, "valueDelta": 1 } },
        "output": { "initialValuesDataType": "FLOAT32", "initialValues": { "valueCount": 54, "value": 0 } }, // 6 x 9
    },
    "dispatchables":
    {
        "tile":
        {
            "type": "DML_OPERATOR_TILE",
            "desc":
            {
                "Repeats": [1, 1, 3, 3], /* repeats first */
                "InputTensor":  { "DataType": "FLOAT32", "Sizes": [1, 1, 2, 3], "Strides": [] },
                "OutputTensor": { "DataType": "FLOAT32", "Sizes": [1, 1, 6, 8] },
                "RepeatsCount": 4,
            }
        }
    },
    "commands":
    [
        { "type": "dispatch", "dispatchable": "tile",
          "bindings": { "InputTensor": "input", "OutputTensor": "output" } },
        { "type": "print", "resource": "output" }
    ]
}
"""


def key_orders(text: str) -> dict[tuple, list[str]]:
    """The keys of every object in the order the text writes them, by the object's path."""
    out: dict[tuple, list[str]] = {}

    def walk(value, path):
        if isinstance(value, list) and value and all(isinstance(p, tuple) for p in value):
            out[path] = [k for k, _ in value]
            for k, v in value:
                walk(v, (*path, k))
        elif isinstance(value, list):
            for n, v in enumerate(value):
                walk(v, (*path, n))

    walk(json.loads(strip_jsonc(text), object_pairs_hook=lambda pairs: [tuple(p) for p in pairs]), ())
    return out


def object_openings(text: str) -> dict[tuple, str]:
    """The first characters of every object of the text, by its path."""
    out: dict[tuple, str] = {}

    def walk(span, path):
        if span.members is not None:
            out[path] = text[span.start : span.start + 20]
        for m in span.members or []:
            walk(m.value, (*path, m.key))
        for n, e in enumerate(span.elements or []):
            walk(e, (*path, n))

    walk(spans(text), ())
    return out


def model_fixed(document, level="6.4"):
    """The reference: every fix of each report applied to the parsed document, at most 3 times."""
    return wrapped(fix_all(document, level)[0])


def test_a_jsonc_file_keeps_its_comments_key_order_and_layout_and_is_valid():
    document = json.loads(strip_jsonc(JSONC))
    fixed = model_fixed(document)
    out = keep_layout(JSONC, fixed)
    assert dmltile.validate(json.loads(strip_jsonc(out))).valid
    assert wrapped(json.loads(strip_jsonc(out))) == fixed
    changed = [(a, b) for a, b in zip(JSONC.splitlines(), out.splitlines(), strict=True) if a != b]
    assert changed == [
        ('    "Sizes": [4, 8],   // one column short', '    "Sizes": [4, 9],   // one column short'),
        (
            '  "InputTensor": {"Sizes": [2, 3], "DataType": "float"},',
            '  "InputTensor": {"Sizes": [2, 3], "DataType": "DML_TENSOR_DATA_TYPE_FLOAT32"},',
        ),
    ]
    assert key_orders(out) == key_orders(JSONC)


def test_fix_and_diff_on_a_file_touch_only_the_fixed_lines(tmp_path):
    text = (
        '{"Repeats": [2, 3],\n "RepeatsCount": 2,\n'
        ' "OutputTensor": {"Sizes": [4, 8], "DataType": "INT8"},\n'
        ' "Input": {"DataType": "INT8", "Sizes": [2, 3]}}\n'
    )
    target = tmp_path / "t.json"
    target.write_text(text)
    diff = invoke("validate", target, "--diff", "--unsafe-fixes").stdout
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("---", "+++")]
    assert changed == [
        '- "OutputTensor": {"Sizes": [4, 8], "DataType": "INT8"},',
        '- "Input": {"DataType": "INT8", "Sizes": [2, 3]}}',
        '+ "OutputTensor": {"Sizes": [4, 9], "DataType": "INT8"},',
        '+ "InputTensor": {"DataType": "INT8", "Sizes": [2, 3]}}',
    ]
    assert invoke("validate", target, "--fix", "--unsafe-fixes").exit_code == 0
    after = target.read_text()
    assert dmltile.validate(target).valid and after == text.replace("8]", "9]").replace(
        '"Input"', '"InputTensor"'
    )


def test_added_fields_go_beside_their_neighbours_in_directml_field_order():
    text = '{\n  "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},\n  "Repeats": [2, 3]\n}\n'
    out = keep_layout(text, model_fixed(json.loads(text)))
    assert out == (
        '{\n  "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},\n'
        '  "OutputTensor": {"DataType": "DML_TENSOR_DATA_TYPE_FLOAT32", "Sizes": [4, 9]},\n'
        '  "Repeats": [2, 3]\n}\n'
    )
    assert dmltile.validate(json.loads(out)).valid


# -- for generated broken documents, the text-level fix is the model-level fix --------------------
@st.composite
def written(draw, value, indent: int | None, comments: bool):
    """``value`` as JSON(C) text: keys in a drawn order, indented or on one line, with comments."""
    if isinstance(value, dict):
        keys = draw(st.permutations(list(value)))
        parts = [f"{json.dumps(k)}: {draw(written(value[k], indent, comments))}" for k in keys]
        opening = "{ /* an object */" if comments else "{"
    elif isinstance(value, list):
        parts = [draw(written(v, indent, comments)) for v in value]
        opening = "["
    else:
        return json.dumps(value)
    closing = "}" if opening.startswith("{") else "]"
    if indent is None or not parts:
        return opening + " " + ", ".join(parts) + " " + closing
    pad = "\n" + " " * indent
    body = ("," + pad).join(p.replace("\n", pad) for p in parts)
    return opening + pad + body + ("," if comments else "") + "\n" + closing


def broken_document(data, level):
    doc = copy.deepcopy(data.draw(valid_documents(level)))
    for kind in data.draw(st.lists(st.sampled_from(sorted(BROKEN)), min_size=1, max_size=2)):
        try:
            tensor = _tensor(doc, data.draw(st.sampled_from(["InputTensor", "OutputTensor"])))
            BROKEN[kind](doc, tensor, data.draw(st.integers(0, len(tensor["Sizes"]) - 1)), data.draw)
        except (KeyError, TypeError, IndexError, AttributeError, ValueError):
            pass  # an earlier mutation took away what this one breaks
    return doc


@settings(
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    phases=[Phase.generate],
)
@given(data=st.data())
def test_the_fix_written_into_the_text_is_the_fix_made_on_the_document(data):
    level = data.draw(st.sampled_from(["3.1", "6.4"]))
    doc = broken_document(data, level)
    errors = dmltile.validate(doc, level).errors
    if not errors or any(i.code in UNFIXABLE for i in errors):
        return
    comments = data.draw(st.booleans())
    text = data.draw(written(doc, data.draw(st.sampled_from([None, 2, 4])), comments))
    fixed = model_fixed(doc, level)
    event("fixed")
    out = keep_layout(text, fixed)
    assert wrapped(json.loads(strip_jsonc(out))) == fixed, (text, out)
    if comments:  # every object that kept a member of its own keeps its comment
        for path, opening in object_openings(out).items():
            if set(key_orders(text).get(path, ())) & set(key_orders(out)[path]):
                assert opening.startswith("{ /* an object */"), (path, text, out)
    # the keys the text wrote keep their order; renamed ones keep their place
    before, after = key_orders(text), key_orders(out)
    for path, keys in after.items():
        if path in before:
            kept = [k for k in before[path] if k in keys]
            assert [k for k in keys if k in kept] == kept, (text, out)


def test_a_key_written_with_escapes_is_the_key_it_spells():
    text = (
        '{"Input\\u0054ensor": {"DataType": "FLOAT32", "Sizes": [2, 3]}, '
        '"OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 8]}, "Repeats": [2, 3]}'
    )
    out = keep_layout(text, model_fixed(json.loads(text)))
    assert out == text.replace("[4, 8]", "[4, 9]")


def test_removed_members_take_their_own_line_and_comma_and_nothing_else():
    kept = '  "InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]},\n'
    text = (
        "{\n" + kept + '  "Comment": "mine",\n  "OutputTensor": {"DataType": "FLOAT32", "Sizes": [4, 9]},\n'
        '  "Repeats": [2, 3],\n  "Note": 1\n}\n'
    )
    out = keep_layout(text, model_fixed(json.loads(text)))
    assert out == text.replace('  "Comment": "mine",\n', "").replace(',\n  "Note": 1', "")


def test_fix_on_a_jsonc_dxdispatch_model_changes_one_value_and_keeps_its_comments(tmp_path):
    target = tmp_path / "tile.json"
    target.write_text(MODEL)
    assert invoke("validate", target).exit_code == 1
    result = invoke("validate", target, "--fix")
    assert result.exit_code == 0 and "tile: DML205" in result.stdout, result.stdout
    assert target.read_text() == MODEL.replace("[1, 1, 6, 8]", "[1, 1, 6, 9]")
    assert dmltile.validate(target).valid


def test_a_dxdispatch_model_keeps_its_defaults_spelt_as_dxdispatch_spells_them(tmp_path):
    broken = MODEL.replace(
        '"DataType": "FLOAT32", "Sizes": [1, 1, 2, 3]', '"DataType": "float", "Sizes": [1, 1, 2, 3]'
    )
    target = tmp_path / "tile.json"
    target.write_text(broken)
    assert invoke("validate", target, "--fix", "--unsafe-fixes").exit_code == 0
    fixed = target.read_text()
    assert '"Strides": []' in fixed and "/* repeats first */" in fixed and "// 6 x 9" in fixed
    assert '"DataType": "DML_TENSOR_DATA_TYPE_FLOAT32"' in fixed and dmltile.validate(target).valid


def test_a_tensor_missing_before_and_after_the_fix_is_not_written_as_null():
    # Both tensors missing: nothing to derive them from, so the fix adds neither (a hint in words
    # instead), and the text keeps only what it had.
    text = '{\n  "Repeats": [\n    3,\n    1\n  ]\n}'
    out = keep_layout(text, model_fixed(json.loads(text)))
    assert "null" not in out and json.loads(out) == {"Repeats": [3, 1]}
