"""The one settings mechanism: every subcommand's flags, the --config file and each stage's
typed settings come from the sections of `settings.config.PipelineConfig`."""
