"""The ``galley`` command line."""
