"""The model card a push ships: built from the audit and the ingest report (card.py,
sources.py), written as model_card.json and model_card.html (render.py)."""
