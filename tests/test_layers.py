"""The package's layers point one way, and the core does no I/O.

    core (engine, framing, adapters, redact)  <-  stream / report  <-  net, history
        <-  app  <-  cli

Every import in every module is read from its syntax tree, relative ones
resolved against the module's own package, ``if TYPE_CHECKING`` and imports
inside functions included (a lazy import is still a dependency). A module may
import its own layer and the layers below; never one above, and ``net`` and
``history`` never import each other. The core additionally imports no UI,
network or file-system library and calls no ``open``/``print``/``input``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "tui" / "fraglens"

#: first name below ``fraglens`` -> its layer
LAYERS: dict[str, int] = {
    "__init__": 0,  # only the version
    "engine": 0,
    "framing": 0,
    "adapters": 0,
    "redact": 0,
    "demo": 0,  # data: the bundled capture
    "stream": 1,
    "report": 1,
    "report_text": 1,
    "load": 1,
    "loading": 1,
    "runs": 1,
    "eventstream_runs": 1,
    "ndjson_runs": 1,
    "recording_times": 1,
    "chunking": 1,
    "compare_text": 1,
    "timing": 1,
    "tools": 1,
    "schema": 1,
    "fit": 1,
    "usage": 1,
    "net": 2,
    "history": 2,
    "app": 3,
    "cli": 4,
    "__main__": 5,
}
SIBLINGS = {frozenset({"net", "history"})}
CORE = {name for name, layer in LAYERS.items() if layer == 0}

FORBIDDEN_IN_CORE = {
    "textual", "rich", "httpx", "httpx_sse", "socket", "asyncio", "uvicorn", "pyperclip",
    "subprocess", "urllib.request", "http", "requests", "os", "pathlib", "shutil", "io",
    "threading", "time", "tempfile", "sys",
}
FORBIDDEN_CALLS = {"open", "input", "print"}

MODULES = sorted(ROOT.rglob("*.py"))


def module_name(path: Path) -> list[str]:
    """``cli/check.py`` -> fraglens.cli.check; ``cli/__init__.py`` -> fraglens.cli.__init__."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ["fraglens", *parts]


def imported(path: Path) -> list[tuple[str, int]]:
    """Every module ``path`` imports, as absolute dotted names, with the line."""
    name = module_name(path)
    package = name[:-1]  # a module's package; for __init__.py, the package itself
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            out.append((target, node.lineno))
            # `from . import x` and `from .. import x` name modules too
            out += [(f"{target}.{alias.name}", node.lineno) for alias in node.names]
    return out


def top(dotted: str) -> str | None:
    """The first name below fraglens, or None for another distribution's module."""
    parts = dotted.split(".")
    if parts[0] != "fraglens":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_module_has_a_layer():
    tops = {top(".".join(module_name(p))) for p in MODULES}
    assert tops <= set(LAYERS), tops - set(LAYERS)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_down(path: Path):
    here = top(".".join(module_name(path)))
    assert here is not None
    for target, line in imported(path):
        there = top(target)
        if there is None or there == here or there not in LAYERS:
            continue  # another distribution, or a name imported from a module
        assert LAYERS[there] <= LAYERS[here], (
            f"{path.relative_to(ROOT)}:{line} imports {target}: {there} is above {here}"
        )
        assert frozenset({here, there}) not in SIBLINGS, (
            f"{path.relative_to(ROOT)}:{line} imports {target}: {here} and {there} are siblings"
        )


@pytest.mark.parametrize(
    "path",
    [p for p in MODULES if top(".".join(module_name(p))) in CORE],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_core_module_is_sans_io(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            assert name.split(".")[0] not in FORBIDDEN_IN_CORE and name not in FORBIDDEN_IN_CORE, (
                f"{path.relative_to(ROOT)} imports {name}"
            )
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in FORBIDDEN_CALLS, f"{path.name} calls {node.func.id}()"


def test_relative_imports_are_resolved():
    """The resolver itself: a relative import that climbs is seen as what it names."""
    found = dict(imported(ROOT / "cli" / "check.py"))
    assert "fraglens.report" in found and "fraglens.cli.common" in found


def test_an_upward_import_would_be_caught(tmp_path):
    """The rule is not vacuous: an engine module importing the app breaks it."""
    assert LAYERS[top("fraglens.app.app")] > LAYERS[top("fraglens.engine.calls")]
    assert any(top(t) == "app" for t, _ in imported(ROOT / "cli" / "debugger.py"))
