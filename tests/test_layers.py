"""The package's layering: each folder is one layer and imports only from the layers below it, and
no module imports itself through others (no import cycle, inside a layer either).

Every import statement of every module is read with ``ast`` (those inside functions too), resolved
to the dmltile module it names, and checked against the layer order and for cycles.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import dmltile

PACKAGE = Path(dmltile.__file__).resolve().parent
LAYERS = ("core", "validate", "execute", "lower", "interop", "teach", "cli")
TOP_LEVEL = {"__init__.py", "errors.py", "py.typed", "feature_levels", "__pycache__", *LAYERS}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, name: str | None = None) -> list[tuple[int, str]]:
    """(line, absolute module name) of every dmltile import in ``path`` (module ``name``), wherever
    it sits in the file."""
    name = name or module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [
                (node.lineno, alias.name) for alias in node.names if alias.name.split(".")[0] == "dmltile"
            ]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] != "dmltile":
                continue
            # `from . import x` may name a submodule x: check it as the module it is
            subs = [f"{target}.{a.name}" for a in node.names if is_module(f"{target}.{a.name}")]
            found += [(node.lineno, s) for s in subs] or [(node.lineno, target)]
    return found


def is_module(name: str) -> bool:
    """Whether ``name`` is a module or package of dmltile (not a function or class in one)."""
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def layer_of(module: str) -> int | None:
    """The layer index of a dmltile module; None for ``dmltile.errors`` (usable from every layer)."""
    parts = module.split(".")
    if parts[:2] == ["dmltile", "errors"]:
        return None
    if len(parts) < 2 or parts[1] not in LAYERS:
        return len(LAYERS)  # the public API (dmltile/__init__) sits above every layer
    return LAYERS.index(parts[1])


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_a_higher_layer(path):
    source = module_name(path)
    own = layer_of(source)
    if source == "dmltile":
        return  # the public API may import every layer
    upward = []
    for line, target in imported_modules(path):
        theirs = layer_of(target)
        if own is None and target != "dmltile.errors":
            upward.append(
                f"line {line}: dmltile.errors imports {target}; it must import nothing from dmltile"
            )
        elif own is not None and theirs is not None and theirs > own:
            upward.append(f"line {line}: {source} (layer {LAYERS[own]}) imports {target}")
    assert not upward, "\n".join(upward)


def test_the_checker_sees_upward_imports_inside_functions(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from ..teach import explain\n    from dmltile.cli import app\n")
    found = [t for _, t in imported_modules(probe, "dmltile.core.probe")]
    assert found == ["dmltile.teach.explain", "dmltile.cli.app"]
    assert all(layer_of(t) > layer_of("dmltile.core") for t in found)


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every cycle of the import graph as one of its paths (``a -> b -> a``), one per strongly
    connected group of modules (Tarjan's algorithm); a module importing itself is a cycle too."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1 or module in graph.get(module, ()):
                cycles.append(cycle_path(graph, set(group), module))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return cycles


def cycle_path(graph: dict[str, set[str]], group: set[str], start: str) -> list[str]:
    """A path from ``start`` back to itself through the modules of ``group`` (breadth first)."""
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        module = frontier.pop(0)
        for target in sorted(graph.get(module, ()) & group):
            if target == start:
                return [*paths[module], start]
            if target not in paths:
                paths[target] = [*paths[module], target]
                frontier.append(target)
    raise AssertionError(f"{start} is in no cycle of {sorted(group)}")


def import_graph(paths) -> dict[str, set[str]]:
    """Module name -> the dmltile modules it imports (the public API's __init__ left out: it imports
    every layer on purpose and nothing inside the layers may import it)."""
    return {
        module_name(p): {t for _, t in imported_modules(p) if t != "dmltile"}
        for p in paths
        if module_name(p) != "dmltile"
    }


def test_no_import_cycle():
    cycles = import_cycles(import_graph(MODULES))
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_the_cycle_checker_sees_a_cycle_through_a_lazy_import(tmp_path):
    (tmp_path / "a.py").write_text("from .b import f\n")
    (tmp_path / "b.py").write_text("def f():\n    from .c import g\n")
    (tmp_path / "c.py").write_text("from dmltile.lower.a import h\n")
    (tmp_path / "d.py").write_text("from .a import f\n")
    graph = {
        f"dmltile.lower.{p.stem}": {t for _, t in imported_modules(p, f"dmltile.lower.{p.stem}")}
        for p in tmp_path.glob("*.py")
    }
    assert import_cycles(graph) == [
        ["dmltile.lower.a", "dmltile.lower.b", "dmltile.lower.c", "dmltile.lower.a"]
    ]
    del graph["dmltile.lower.c"]
    assert import_cycles(graph) == []
    assert import_cycles({"dmltile.core.x": {"dmltile.core.x"}}) == [["dmltile.core.x", "dmltile.core.x"]]


def test_the_top_level_holds_only_the_api_the_errors_and_the_layers():
    assert {p.name for p in PACKAGE.iterdir()} <= TOP_LEVEL
    assert all((PACKAGE / layer / "__init__.py").is_file() for layer in LAYERS)


def test_public_functions_keep_their_names_after_every_module_is_imported():
    for info in pkgutil.walk_packages(dmltile.__path__, "dmltile."):
        importlib.import_module(info.name)
    for name in ("validate", "execute", "lower", "compile", "explain", "check"):
        assert callable(getattr(dmltile, name)) and not hasattr(getattr(dmltile, name), "__path__"), name
    assert set(dmltile.__all__) <= set(dir(dmltile))
