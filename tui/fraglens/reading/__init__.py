"""Reading: a capture in (a path, stdin, bytes), a ``Stream`` out.

``capture`` opens a path or bytes; ``readers`` is the one table that picks a
reader from the first bytes (event stream, recording, SSE, NDJSON, or framed
whole) and builds the stream; the bulk readers (``sse_runs``, ``ndjson_runs``,
``eventstream_runs``) read a long call's runs of events at once;
``recording_times`` gives a recording's events their times; ``findings``
adds what the framing met when a read ends; ``progressive`` reads the same
way a slice at a time for the app; ``stream`` is the pipeline every view
feeds (events -> adapter -> engine). Nothing here judges a call beyond the
engine's verdicts, and nothing here prints.
"""
