"""Custom TFX components of imagepipe, one folder each."""
