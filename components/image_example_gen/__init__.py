"""ImageExampleGen: ingest image datasets into TFRecords of tf.Example."""
