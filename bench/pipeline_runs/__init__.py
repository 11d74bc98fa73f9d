"""Whole `imagepipe run`s: cold and warm, on real datasets, against size, one executor alone."""
