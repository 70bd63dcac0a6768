"""Batch: many captures in (files, folders, globs, fsspec URLs), one report
line each out, in the order the captures were named.

``paths`` expands what the user named into captures; ``lines`` checks one
capture into its line (``report.checked``, the function ``check`` runs);
``runners`` runs that function on local processes (``forks``, where the
system forks) or on a Dask cluster and hands the lines back in order,
holding only a few of them at a time.
"""
