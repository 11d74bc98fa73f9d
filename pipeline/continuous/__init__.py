"""Continuous training's commands: `imagepipe versions` and `imagepipe rollback`."""
