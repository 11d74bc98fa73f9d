"""The `imagepipe` command: flags generated from the settings, and what each subcommand does."""
