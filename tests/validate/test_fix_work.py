"""Fixing work follows the issues listed, not the document's size: a document with thousands of
unknown keys lists 100 issues, and each listed fix is judged on a document that holds only the keys
those issues name (not the thousands nobody sees)."""

from __future__ import annotations

import dmltile
from dmltile.validate.api import _judge
from dmltile.validate.fixes import attach_fixes

BASE = {
    "InputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 2, 3]},
    "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 1, 6, 9]},
    "Repeats": [1, 1, 3, 3],
}


def many_keys(n: int) -> dict:
    return {**BASE, **{f"k{i}": i for i in range(n)}}


def test_each_fix_is_judged_on_the_listed_keys_only():
    doc = many_keys(5_000)
    report = dmltile.validate(doc)
    listed = [i for i in report.issues if i.code == "DML003"]
    assert 0 < len(listed) <= 101 and not report.valid
    judged_sizes = []

    def judge(document, level):
        judged_sizes.append(len(document["Desc"]))
        return _judge(document, level)

    attach_fixes(doc, [i.model_copy(update={"fix": ()}) for i in report.issues], None, judge)
    assert judged_sizes and max(judged_sizes) <= len(BASE) + len(listed)


def test_a_listed_unknown_key_is_fixed_by_removing_it_alone():
    for n in (10, 5_000):
        first = dmltile.validate(many_keys(n)).issues[0]
        assert first.code == "DML003" and first.path == "Desc.k0"
        assert [(e.op, e.path) for e in first.fix] == [("remove", "Desc.k0")], first.fix
        assert dmltile.validate(dmltile.apply_fix(many_keys(n), first)).issues[0].path == "Desc.k1"
