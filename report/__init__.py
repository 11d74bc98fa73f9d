"""`imagepipe report`: PNG charts and an index.html for the latest run (see build.py)."""
