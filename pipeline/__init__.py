"""imagepipe pipeline: one config, the TFX DAG, the local runner, the CLI and the run summary."""
