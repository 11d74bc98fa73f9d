"""`imagepipe monitor`: the served model against what it meets in production."""
