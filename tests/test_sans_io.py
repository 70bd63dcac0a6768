"""The engine, the framing and the adapters never do I/O and never import a UI
or a network library: readers feed them, views read from them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "tui" / "fraglens"
CORE = sorted(
    [*ROOT.joinpath("engine").glob("*.py"), *ROOT.joinpath("framing").glob("*.py"),
     *ROOT.joinpath("adapters").glob("*.py"), ROOT / "stream.py", ROOT / "report.py"]
)
FORBIDDEN_MODULES = {
    "textual", "rich", "httpx", "httpx_sse", "socket", "asyncio", "uvicorn", "pyperclip",
    "subprocess", "urllib.request", "http.client", "requests", "os", "pathlib", "shutil",
}
FORBIDDEN_CALLS = {"open", "input", "print"}


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(ROOT)))
def test_core_module_is_sans_io(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            names = []
        for name in names:
            top = name.split(".")[0]
            assert name not in FORBIDDEN_MODULES and top not in FORBIDDEN_MODULES, (
                f"{path.name} imports {name}"
            )
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in FORBIDDEN_CALLS, f"{path.name} calls {node.func.id}()"


def test_the_check_covers_the_engine():
    assert any(p.name == "reassembler.py" for p in CORE)
    assert any(p.name == "sse.py" for p in CORE)
