"""The resolver of the model a Trainer warm-starts from (local runs)."""
