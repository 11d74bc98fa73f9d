"""Dataset readers: list a dataset (folder tree, IDX, .npz, TFRecords), read its units of work."""
