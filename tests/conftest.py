from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_streams"
SHARED = ROOT.parent / "shared"

#: seconds: a hang guard for the network tests, never a measure. Waits return the
#: moment what they wait for happens; this only bounds a real hang, on a machine
#: that may be very busy (a shared CI runner, test runs in parallel).
PATIENCE = 60.0

#: ``make test-deep`` sets it: every property test runs its full count of examples
DEEP = os.environ.get("FRAGLENS_DEEP") == "1"
#: the examples a property test runs at most in ``make test`` (and CI)
CI_EXAMPLES = 100


def examples(full: int) -> int:
    """A property test's example count: ``full`` under ``make test-deep``, at
    most ``CI_EXAMPLES`` in the suite a developer runs often."""
    return full if DEEP else min(full, CI_EXAMPLES)


@pytest.fixture
def samples() -> Path:
    return SAMPLES


def shared_or_skip() -> Path:
    if not (SHARED / "real_streams").is_dir():
        pytest.skip(f"{SHARED} is not here: the real-stream checks need ../shared beside the repo")
    return SHARED


@pytest.fixture(scope="session")
def _cache_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def cache_home(_cache_home, monkeypatch) -> Path:
    """Prices resolved from the genai-prices table are cached under
    ``$XDG_CACHE_HOME``: one cache for the session, never the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(_cache_home))
    return _cache_home


@pytest.fixture(autouse=True)
def state_home(tmp_path_factory, monkeypatch) -> Path:
    """The app remembers the captures it opened under ``$XDG_STATE_HOME``:
    every test gets its own, never the user's."""
    home = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    return home


async def asgi_request(scope, receive) -> tuple[dict[str, str], bytes]:
    """What a loopback ASGI test upstream was sent: its headers (names in
    lower case) and its whole body."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    return {k.decode().lower(): v.decode() for k, v in scope["headers"]}, body
