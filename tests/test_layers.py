"""The package's layers point one way, and the core does no I/O.

    core (engine, framing, adapters, redact, records)  <-  reading  <-  fit  <-  report
        <-  net, history  <-  app  <-  cli

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
    "records": 0,  # the plain records the core is made of
    "demo": 0,  # data: the bundled capture
    "reading": 1,  # a capture in, a Stream out
    "fit": 2,  # a stream's calls against the declared tools
    "report": 3,  # a finished stream in, a document out
    "net": 4,
    "history": 4,
    "batch": 4,  # many captures checked on local processes or a cluster
    "app": 5,
    "cli": 6,
    "__main__": 7,
}
SIBLINGS = {frozenset({"net", "history"}), frozenset({"batch", "history"}),
            frozenset({"batch", "net"})}
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
    assert "fraglens.report.document" in found and "fraglens.cli.common" in found


def test_an_upward_import_would_be_caught(tmp_path):
    """The rule is not vacuous: an engine module importing the app breaks it."""
    assert LAYERS[top("fraglens.app.app")] > LAYERS[top("fraglens.engine.calls")]
    assert any(top(t) == "app" for t, _ in imported(ROOT / "cli" / "debugger.py"))


# -- no cycles ---------------------------------------------------------------------

MODULE_NAMES = {".".join(module_name(p)).removesuffix(".__init__"): p for p in MODULES}


def _type_checking_lines(tree: ast.AST) -> set[int]:
    """The lines of imports under ``if TYPE_CHECKING:``, which never run."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                lines.update(n.lineno for n in ast.walk(inner) if hasattr(n, "lineno"))
    return lines


def _module_of(dotted: str) -> str | None:
    """The project module ``dotted`` names (a name imported from a module is the module)."""
    while dotted:
        if dotted in MODULE_NAMES:
            return dotted
        dotted = dotted.rpartition(".")[0]
    return None


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports anywhere outside TYPE_CHECKING
    (at the top or inside a function: a lazy import that calls back is still
    a way round)."""
    graph: dict[str, set[str]] = {}
    for name, path in MODULE_NAMES.items():
        skip = _type_checking_lines(ast.parse(path.read_text(encoding="utf-8")))
        targets = {_module_of(t) for t, line in imported(path) if line not in skip}
        graph[name] = {t for t in targets if t is not None and t != name}
        # a package's __init__ imported on the way to one of its modules is not an edge
        graph[name] = {t for t in graph[name] if not name.startswith(t + ".")}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle in ``graph``, or None (an iterative depth-first search)."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    for root in sorted(graph):
        if state.get(root):
            continue
        path, stack = [root], [iter(sorted(graph[root]))]
        state[root] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def test_no_module_imports_its_way_back_to_itself():
    """No import cycle between modules: opening a capture picks a reader once
    and nothing calls back into the module that called it."""
    assert _cycle(import_graph()) is None, " -> ".join(_cycle(import_graph()) or [])


def test_a_cycle_would_be_caught():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_package_root_holds_few_modules():
    """The middle floor lives in rooms: at most four modules loose at the root."""
    loose = [p.name for p in ROOT.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
    assert len(loose) <= 4, loose
