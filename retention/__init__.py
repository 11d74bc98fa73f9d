"""`imagepipe gc`: retention for an output, local or gs://. Keeps what the served model,
the rollback candidates and their lineage need; deletes older runs' artifacts, older
versions and what interrupted runs and pushes left (docs/retention.md)."""
