"""Storage shared by every stage: the one file layer for local paths and object stores."""
