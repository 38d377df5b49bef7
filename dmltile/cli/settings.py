"""``[tool.dmltile]`` in pyproject.toml: what ``dmltile validate`` does when its options are not given.

The file is the first ``pyproject.toml`` holding a ``[tool.dmltile]`` table, looked for from the
working directory upward (as ruff finds ``[tool.ruff]``). An option given on the command line wins
over the file; the file wins over the defaults. A key the table does not know, or a value of the
wrong type, is a usage error naming the file, the key and what it takes.
"""

from __future__ import annotations

import fnmatch
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

# Each key, and what its value is: a string, a list of strings (a comma-separated string is
# accepted too), or a boolean. The command-line option of each key has the same name.
KEYS = {
    "feature-level": 'a string such as "3.1"',
    "directml": 'a DirectML version string such as "1.9.1"',
    "select": 'a list of rule codes or prefixes, such as ["DML1", "DML205"]',
    "ignore": "a list of rule codes or prefixes",
    "warnings-as-errors": "true or false",
    "unsafe-fixes": "true or false",
    "exclude": 'a list of glob patterns, such as ["build", "tests/bad_*.json"]',
}
_LISTS = ("select", "ignore", "exclude")
_FLAGS = ("warnings-as-errors", "unsafe-fixes")


class SettingsError(ValueError):
    """The settings file cannot be read, or holds a key or value dmltile does not take."""


@dataclass
class Settings:
    """The values in force and where each came from (the file's path, "command line" or "default")."""

    file: Path | None = None
    values: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)

    def get(self, key: str) -> Any:
        return self.values.get(key)

    def given(self, key: str, value: Any, default: Any) -> None:
        """Put the command line's ``value`` (None: not given) over the file's, else the default."""
        if value is not None:
            self.values[key], self.sources[key] = value, "command line"
        elif key not in self.values:
            self.values[key], self.sources[key] = default, "default"

    def excluded(self, path: Path) -> str | None:
        """The ``exclude`` pattern that matches ``path`` (relative to the settings file's folder, or
        any one folder or file name in it), or None."""
        patterns = self.values.get("exclude") or []
        if not patterns:
            return None
        try:
            relative = path.resolve().relative_to(self.file.parent.resolve()) if self.file else path
        except ValueError:
            relative = path
        names = [relative.as_posix(), *relative.parts]
        return next((p for p in patterns if any(fnmatch.fnmatchcase(n, p) for n in names)), None)


def find_file(start: Path) -> tuple[Path, dict] | None:
    """The first pyproject.toml holding ``[tool.dmltile]``, from ``start`` upward, and that table."""
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if not candidate.is_file():
            continue
        try:
            data = tomllib.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
            raise SettingsError(f"{candidate}: cannot be read as TOML ({e})") from None
        table = data.get("tool", {}).get("dmltile") if isinstance(data.get("tool"), dict) else None
        if table is not None:
            return candidate, table
    return None


def _value(path: Path, key: str, value: Any) -> Any:
    """The table's value in the form the command line gives it (lists as comma-separated text)."""
    wrong = SettingsError(f"{path}: [tool.dmltile] {key} = {value!r}: write {KEYS[key]}")
    if key in _FLAGS:
        if not isinstance(value, bool):
            raise wrong
        return value
    if key in _LISTS:
        items = value.split(",") if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise wrong
        items = [v.strip() for v in items if v.strip()]
        return items if key == "exclude" else ",".join(items)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise wrong
    return str(value)


def load_settings(start: Path | None = None) -> Settings:
    """The settings of the first ``[tool.dmltile]`` table from ``start`` (the working directory)
    upward; empty when there is none. SettingsError for an unknown key or a wrong value."""
    found = find_file(Path.cwd() if start is None else start)
    if found is None:
        return Settings()
    path, table = found
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: [tool.dmltile] must be a table")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise SettingsError(
            f"{path}: [tool.dmltile] has unknown key{'s' * (len(unknown) != 1)} {', '.join(unknown)}; "
            f"the keys are {', '.join(KEYS)}"
        )
    settings = Settings(file=path)
    for key, value in table.items():
        settings.values[key], settings.sources[key] = _value(path, key, value), str(path)
    return settings


def describe_settings(settings: Settings, start: Path | None = None) -> list[str]:
    """``--show-settings``: the file used (or that none was found), then each key, its value and
    where it came from."""
    where = Path.cwd() if start is None else start
    lines = [
        f"settings file: {settings.file}"
        if settings.file
        else f"settings file: none (no pyproject.toml with [tool.dmltile] from {where} upward)"
    ]
    for key in KEYS:
        value = settings.values.get(key)
        shown = "none" if value is None or value == [] else value if isinstance(value, str) else repr(value)
        if isinstance(value, bool):
            shown = str(value).lower()
        lines.append(f"  {key} = {shown}  ({settings.sources.get(key, 'default')})")
    return lines
