"""The pieces of the Trainer's run_fn (modules/trainer.py), one job each."""
