"""Fixes address fields by their keys, never by text: a stray key whose name looks like the path of a
real field ("Repeats[0]", "Desc.InputTensor") is that key alone, and `--fix` removes it without
touching the field its name spells. Checked through the real entry point, `validate --fix` on a file."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dmltile
from dmltile.validate.paths import join_path, split_path
from dmltile.validate.rules.edits import wrapped
from tests.cli_support import DOC_EXAMPLE, invoke
from tests.validate.test_hints_keep_data import leaves

DOC = json.loads(DOC_EXAMPLE.read_text())


def objects(value, path=()):
    """The keys of every object in a JSON value (where a stray key can be put)."""
    if isinstance(value, dict):
        yield path
        for k, v in value.items():
            yield from objects(v, (*path, k))


REAL_PATHS = sorted({join_path(list(keys[:n])) for keys, _ in leaves(DOC) for n in range(1, len(keys) + 1)})
PLACES = list(objects(DOC))


def spellings(path: str) -> list[str]:
    """A real path as a key might spell it: whole, without its first parts, with its last index."""
    parts = path.split(".")
    return [".".join(parts[n:]) for n in range(len(parts))]


stray_names = st.sampled_from(REAL_PATHS).flatmap(lambda p: st.sampled_from(spellings(p)))
stray_values = st.one_of(st.integers(0, 9), st.just(None), st.lists(st.integers(0, 3), max_size=3))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(PLACES), stray_names, stray_values), min_size=1, max_size=4))
def test_fix_never_changes_a_real_field_for_a_stray_key_named_like_a_path(tmp_path_factory, strays):
    doc = json.loads(json.dumps(DOC))
    added = set()
    for place, name, value in strays:
        holder = doc
        for k in place:
            holder = holder[k]
        if name not in holder:  # a real key's own name is no stray key
            holder[name] = value
            added.add((*place, name))
    path = tmp_path_factory.mktemp("stray") / "doc.json"
    path.write_text(json.dumps(doc, indent=2))
    result = invoke("validate", "--fix", "--unsafe-fixes", path)
    fixed = json.loads(path.read_text())
    assert dict(leaves(fixed)) == dict(leaves(DOC)), (strays, result.output)
    assert result.exit_code == 0 and ("fixed" in result.output or not added)


def test_the_reported_cases_keep_their_data():
    doc = json.loads(json.dumps(DOC))
    doc["Desc"]["Repeats[0]"] = 1
    doc["Desc.InputTensor"] = 1
    report = dmltile.validate(doc)
    stray = {i.path: [e.keys for e in i.fix] for i in report.issues}
    assert stray == {
        'Desc["Repeats[0]"]': [("Desc", "Repeats[0]")],
        '["Desc.InputTensor"]': [("Desc.InputTensor",)],
    }
    assert dmltile.apply_fix(doc, [e for i in report.issues for e in i.fix]) == wrapped(DOC)


@given(st.lists(st.one_of(st.text(max_size=12), st.integers(0, 99)), max_size=6))
def test_a_path_text_reads_back_as_its_keys(keys):
    assert split_path(join_path(keys)) == keys


def test_an_edit_given_keys_touches_that_key_only():
    doc = {"Desc": {"Repeats": [1, 1, 3, 3], "Repeats[0]": 7}}
    by_keys = dmltile.Edit(op="remove", keys=("Desc", "Repeats[0]"))
    assert by_keys.path == 'Desc["Repeats[0]"]'
    assert dmltile.apply_fix(doc, [by_keys])["Desc"] == {"Repeats": [1, 1, 3, 3]}
