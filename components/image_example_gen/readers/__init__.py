"""Dataset readers: list a dataset (folder tree, IDX, .npz, TFRecords) and read its units of work."""
