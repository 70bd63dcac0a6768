"""Fit: a tools file (or a request's ``tools``) and a finished stream's calls
in, each call's fit out.

``tools`` reads the declared tools from every format's request shape;
``schema`` holds one call's arguments to its tool's JSON Schema;
``verdicts`` gives each call of a stream its verdict and the diagnostics
``check`` and the app show.
"""
