"""What `pip install .` gives: a package named fraglens, its data, and a
command that works away from the checkout."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .conftest import ROOT, SAMPLES

# one wheel, built once: two workers building it at once collide in the checkout's build/
pytestmark = pytest.mark.xdist_group("packaging")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(ROOT)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if proc.returncode != 0 and "No module named" in proc.stderr:
        pytest.skip(f"cannot build a wheel here: {proc.stderr.strip().splitlines()[-1]}")
    assert proc.returncode == 0, proc.stderr
    [built] = out.glob("fraglens-*.whl")
    return built


def test_the_wheel_holds_fraglens_its_data_and_nothing_else(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.startswith("fraglens-")}
    assert tops == {"fraglens"}  # no top-level `tui`, no tests, no scripts
    assert "fraglens/demo/demo.sse" in names
    assert "fraglens/app/app.tcss" in names
    assert "fraglens/cli/__init__.py" in names
    assert not any("screenshots" in n for n in names)
    metadata = next(n for n in names if n.endswith("METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "License-Expression: MIT" in text
    assert any(n.endswith("licenses/LICENSE") for n in names)


def test_the_installed_copy_runs_away_from_the_checkout(wheel: Path, tmp_path: Path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = dict(os.environ, PYTHONPATH=str(site))
    run = tmp_path / "elsewhere"
    run.mkdir()

    def fraglens(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "fraglens", *args],
            cwd=run, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip

    where = subprocess.run(
        [sys.executable, "-c", "import fraglens; print(fraglens.__file__)"],
        cwd=run, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert where.stdout.startswith(str(site)), where
    no_tui = subprocess.run(
        [sys.executable, "-c", "import tui"], cwd=run, env=env, capture_output=True, timeout=60
    )
    assert no_tui.returncode != 0
    sample = SAMPLES / "backend_gpt4o_parallel.sse"
    checked = fraglens("check", "--json", str(sample))
    assert checked.returncode == 0, checked.stderr
    assert '"calls"' in checked.stdout
    # the calls are validated by the installed copy's worker, started from the install
    fit = SAMPLES / "fit_openai_chat.sse"
    fitted = fraglens("check", "--json", "--tools", str(fit.with_suffix(".tools.json")), str(fit))
    assert fitted.returncode == 1, fitted.stderr  # its calls break their schema on purpose
    assert '"checked": true' in fitted.stdout and "schema-uncheckable" not in fitted.stdout
    helped = fraglens("help", "serve")
    assert helped.returncode == 0 and "exit codes" in helped.stdout
    explained = fraglens("explain", "no-such-code")
    assert explained.returncode == 2 and explained.stderr.count("\n") == 1
    # the demo is package data: `fraglens check :demo:` reads it from the install
    demo = fraglens("check", ":demo:")
    assert demo.returncode in (0, 1), demo.stderr
    assert "tool call" in demo.stdout
