"""Serving: SavedModel against TFLite, the serving check's cost, batch prediction."""
