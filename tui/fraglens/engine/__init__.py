"""The reassembly engine: sans-I/O, free of Textual and httpx.

Fed decoded events, it keeps per-call append-only buffers, an incremental JSON
scanner per call and the diagnostics, and finalizes each call strictly first,
then with an honest repair.
"""
