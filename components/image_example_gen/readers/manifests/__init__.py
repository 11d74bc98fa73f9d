"""Readers of manifests: files that list images (Vertex AI import files, headed CSV)."""
