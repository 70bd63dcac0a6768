"""Report: a finished ``Stream`` (and its fit) in, a document out.

``document`` is ``check --json``'s report; ``text`` the same for people;
``comparison`` the text of ``compare``; ``chunking`` how a stream was cut
into events; ``timing`` when things arrived; ``usage`` the tokens the
provider reported.
"""
