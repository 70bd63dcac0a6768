"""The real streams of ../shared, scored by its own conformance tool."""

from __future__ import annotations

import subprocess
import sys

from .conftest import ROOT, shared_or_skip


def test_every_real_stream_is_read_and_every_oracle_matches():
    shared = shared_or_skip()
    tool = shared / "tools" / "conformance.py"
    proc = subprocess.run(
        [sys.executable, str(tool), "--cmd", f"{sys.executable} -m fraglens check --json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
    )
    last = proc.stdout.strip().splitlines()[-1]
    assert proc.returncode == 0, proc.stdout
    assert last.startswith("real streams: read 59/59, oracles matched")
