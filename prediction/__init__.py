"""`imagepipe predict`: a pushed model on image files, or on a folder or TFRecords with Beam."""
