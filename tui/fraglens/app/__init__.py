"""The Textual debugger: ``fraglens PATH`` opens it, ``fraglens`` alone opens the demo.

It reads engine state and never reassembles: see ``steps.py`` for the lookups
the panes share.
"""
