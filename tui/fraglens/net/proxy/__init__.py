"""``fraglens proxy``'s machinery: forwarding, flows, recordings, headless output.

``server`` forwards requests (uvicorn + httpx) and reports what passed to a
sink; ``child`` runs the server in a process of its own and carries those
facts over a pipe; ``sink`` and ``tee`` turn them into flows (``flows``), each
with a ``Stream``; ``record`` writes flows as recordings; ``headless`` prints
them. The app's flows screen (``fraglens.app.screens.flows``) reads the same
``FlowStore``. Nothing here imports the app or the command line.
"""
