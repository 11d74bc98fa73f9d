"""The model card's format, shared by the ModelCardGenerator and the Pusher."""
