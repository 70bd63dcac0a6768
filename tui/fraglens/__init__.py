"""fraglens: a terminal debugger for streamed LLM tool calls."""

__version__ = "0.1.0"
