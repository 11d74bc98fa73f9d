"""Storage shared by every stage: copying trees of files, local or object store."""
