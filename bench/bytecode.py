"""Compile fraglens to bytecode before a whole-process figure is taken.

An installed fraglens has its bytecode (pip compiles a wheel's modules when
it installs them). A checkout run with PYTHONDONTWRITEBYTECODE set (as on the
machines these figures come from) has none, so every process would compile
the package's sources again: about 70 ms of CPU per ``fraglens check`` there,
which no user pays. The ``__pycache__`` folders this writes are git-ignored.
"""

from __future__ import annotations

import compileall
import io
import subprocess
import tarfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tui" / "fraglens"


def compile_package(package: Path = PACKAGE) -> None:
    if not compileall.compile_dir(str(package), quiet=1):
        raise SystemExit(f"could not compile {package}")


def package_of(rev: str, into: Path) -> Path:
    """``tui/fraglens`` as revision ``rev`` has it, compiled, under ``into``;
    its ``tui`` (to put first on ``PYTHONPATH``): another revision timed in
    the same rounds as this checkout."""
    archive = subprocess.run(["git", "-C", str(PACKAGE.parent.parent), "archive", rev,
                              "tui/fraglens"], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    compile_package(into / "tui" / "fraglens")
    return into / "tui"
