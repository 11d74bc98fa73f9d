"""Data health: duplicates, label conflicts, leakage and imbalance, from ingestion's hashes."""
