"""Encoding: image bytes to tf.Example wire format, in worker processes, written shard by shard."""
