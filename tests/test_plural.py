"""Counts read as English: "1 event", "2 events", never "1 events" or "event(s)"."""

from __future__ import annotations

import re

import pytest

from fraglens.cli import main
from fraglens.engine.plural import counted, noun

from .test_samples import ALL

#: "1" then a word ending in s: a plural after one, unless the word is one of
#: these singulars (verbs and units that end in s). A 1 that ends a list of
#: sizes ("0/10/1 chars", "8 / 12 / 1 chars") shares the list's plural unit.
ONE_PLURAL = re.compile(r"(?<!/ )(?<![\d.,/])\b1 +([a-z]+s)\b")
SINGULAR_ENDING_IN_S = {"is", "was", "has", "does", "as", "its", "this", "ms", "plus"}


def plurals_after_one(text: str) -> list[str]:
    return [
        m.group(0)
        for m in ONE_PLURAL.finditer(text)
        if m.group(1) not in SINGULAR_ENDING_IN_S
    ]


def test_one_takes_the_singular_and_every_other_count_the_plural():
    assert counted(1, "event") == "1 event"
    assert counted(0, "event") == "0 events"
    assert counted(2, "event") == "2 events"
    assert counted(1204, "event") == "1,204 events"
    assert counted(2, "entry") == "2 entries"
    assert counted(3, "repeated copy", "repeated copies") == "3 repeated copies"
    assert noun(1, "match") == "match" and noun(5, "match") == "matches"


def test_the_pattern_finds_what_it_is_for():
    assert plurals_after_one("listed 1 events, 1 backends") == ["1 events", "1 backends"]
    # 21, 0.1 and 1,001 are not one; "1 ms" and "call 1 has" are right
    assert plurals_after_one("21 events, 0.1 seconds, 1,001 calls, 1 ms, call 1 has") == []
    assert plurals_after_one("0/10/1 chars, 8 / 12 / 1 chars") == []


def _args(path) -> list[list[str]]:
    tools = path.with_name(path.name.split(".")[0] + ".tools.json")
    extra = ["--tools", str(tools)] if tools.exists() else []
    return [["check", str(path), *extra], ["check", "--compare", "--chunking", str(path)]]


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_no_plural_after_one_in_the_text_report(path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # no line wrapped between a count and its noun
    for args in _args(path):
        main(args)
        out, err = capsys.readouterr()
        assert plurals_after_one(out + err) == [], args
        assert "(s)" not in out + err, args  # "1 tool call(s)": the count knows its noun
