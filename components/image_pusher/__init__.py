"""ImagePusher: TFX's Pusher with atomic, monotonically versioned pushes to TF Serving."""
