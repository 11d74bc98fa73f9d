"""ImagePusher: TFX's Pusher with atomic, monotonically versioned pushes to TF Serving."""

# What other stages may import (tests/test_codebase_shape.py): pushed versions and the
# served pin, a version's provenance, and the inputs a pipeline last judged.
PUBLIC_MODULES = ("versions", "provenance", "judged_inputs")
