"""User module files for TFX: the Transform preprocessing_fn and the Trainer run_fn."""
