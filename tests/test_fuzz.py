"""Mutated captures never crash: only exit 0, 1 or 2, never a traceback.

Streams, recordings and HAR exports made from every sample, mutated
(``tests/mutants.py``), run through ``check``, ``check --json``,
``history build`` (and ``import-har`` for a HAR) in process. Each case is
made from its number alone, so a failure names a case that can be run again.

The suite runs ``FRAGLENS_FUZZ`` cases (default 300); ``make fuzz`` runs
5,000, each under a watchdog that counts a hang (bench/fuzz.py).
"""

from __future__ import annotations

import os

import pytest

from .mutants import KINDS, case, run

CASES = int(os.environ.get("FRAGLENS_FUZZ", "300"))


@pytest.mark.parametrize("chunk", range(6))
def test_mutated_captures_exit_0_1_or_2_and_never_raise(tmp_path, capsys, chunk):
    # six slices of the cases, so a run shows progress and a failure is narrower
    failures = []
    for n in range(chunk, CASES, 6):
        failures += run(case(n), tmp_path / "case")
        capsys.readouterr()
    assert not failures, f"{len(failures)} failures:\n" + "\n".join(failures[:20])


def test_every_kind_is_made_and_each_case_is_made_again_the_same():
    made = [case(n) for n in range(12)]
    assert {c.kind for c in made} == set(KINDS)
    assert [c.data for c in made] == [case(n).data for n in range(12)]
    hars = [c for c in made if c.kind == "har"]
    assert any(c.data.startswith(b'{"log"') for c in hars)
