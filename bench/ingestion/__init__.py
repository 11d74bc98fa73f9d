"""Ingestion: speed and memory, a bucket's reads, bytes per example, the data-health checks."""
