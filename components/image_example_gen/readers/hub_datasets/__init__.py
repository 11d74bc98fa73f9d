"""Readers of datasets prepared by a library: Hugging Face Parquet and save_to_disk, TFDS."""
