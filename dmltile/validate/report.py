"""What validation returns: issues with stable codes, and the report that collects them."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, computed_field, model_validator

from ..core.enums import FeatureLevel
from .paths import Key, join_path, split_path

Severity = Literal["error", "warning"]
# One spelling of a level in every JSON document: "6.4" (the C name goes in a field of its own).
LevelName = Annotated[FeatureLevel, PlainSerializer(lambda lv: lv.dotted, return_type=str)]


class Edit(BaseModel):
    """One step of a machine-applicable fix, at a field of the canonical wrapped document: ``set`` the
    value there (adding the key if missing), ``rename`` the key to ``to``, or ``remove`` it.

    ``keys`` is the field's address, the keys and indices from the top; applying follows them and
    nothing else. ``path`` is its text for people (``join_path``); given alone, it is read back into
    keys (``split_path``), which for a path ``join_path`` wrote are the same keys."""

    model_config = ConfigDict(frozen=True)

    op: Literal["set", "rename", "remove"]
    path: str = ""
    keys: tuple[Key, ...] = ()
    value: Any = None
    to: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _address(cls, data: Any) -> Any:
        return _with_address(data, "keys")


def _with_address(data: Any, field: str) -> Any:
    """``data`` with both forms of its address: the keys from the text, or the text from the keys."""
    if not isinstance(data, dict):
        return data
    if data.get(field) is not None:
        return {**data, "path": join_path(tuple(data[field]))} if "path" not in data else data
    if isinstance(data.get("path"), str):
        return {**data, field: tuple(split_path(data["path"]))}
    return data


class Issue(BaseModel):
    """One broken rule: where (a path into the canonical document), what, and how to fix it."""

    model_config = ConfigDict(frozen=True)

    code: str
    path: str
    message: str
    # The keys and indices of ``path`` (for a key that looks like a path, the key itself): what a fix
    # addresses. Not printed: ``path`` says it to people, each edit of ``fix`` says its own keys.
    loc: tuple[Key, ...] = Field(default=(), exclude=True, repr=False)
    hint: str = ""
    severity: Severity = "error"
    fix: tuple[Edit, ...] = ()  # applied in order (dmltile.apply_fix), the rule passes; empty: no edit can

    @model_validator(mode="before")
    @classmethod
    def _address(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("loc"):
            return data
        try:
            return _with_address(data, "loc")
        except ValueError:  # a path no field has (a document-wide issue's label): it addresses nothing
            return data

    def __str__(self) -> str:
        text = f"{self.code} {self.severity} at {self.path or '<document>'}: {self.message}"
        return text + (f"\n    fix: {self.hint}" if self.hint else "")


class ValidationReport(BaseModel):
    """The verdict on one descriptor at one feature level."""

    valid: bool
    feature_level: LevelName | None
    output_sizes: list[int] | None = None
    issues: list[Issue] = []

    @computed_field  # type: ignore[prop-decorator]
    @property
    def feature_level_c_name(self) -> str | None:
        """The level as DirectML.h spells it, e.g. DML_FEATURE_LEVEL_6_4."""
        return self.feature_level.c_name if self.feature_level else None

    @property
    def errors(self) -> list[Issue]:
        """The issues that make the descriptor invalid."""
        return [i for i in self.issues if i.severity == "error"]

    @property
    def warnings(self) -> list[Issue]:
        """Hazards DirectML's documentation does not reject."""
        return [i for i in self.issues if i.severity == "warning"]

    @property
    def codes(self) -> list[str]:
        """The codes of every issue, in order."""
        return [i.code for i in self.issues]

    def to_dict(self) -> dict:
        """The report as plain JSON-able data."""
        return self.model_dump(mode="json")

    def to_json(self, indent: int | None = 2) -> str:
        """The report as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    def __str__(self) -> str:
        level = self.feature_level.c_name if self.feature_level else "an unknown feature level"
        head = f"{'valid' if self.valid else 'INVALID'} at {level}"
        return "\n".join([head, *(f"  {i}" for i in self.issues)])
