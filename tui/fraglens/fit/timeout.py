"""How long one call's schema check may take by default (``--schema-timeout``).

Apart from ``budget``, the worker that holds a check to it, so that a command
can name the default without loading the worker's machinery (subprocess,
pickle, selectors: about as long as Python's own start) for a capture that
declares no tools.
"""

from __future__ import annotations

__all__ = ["DEFAULT_BUDGET"]

#: seconds one call's validation may take (``--schema-timeout``)
DEFAULT_BUDGET = 1.0
