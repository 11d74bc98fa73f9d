"""The model card a push ships: built from the audit and the ingest report (card.py,
sources.py), written as model_card.json and model_card.html (render.py)."""

# What other stages may import: the card's format (the Pusher stamps the card it ships).
PUBLIC_MODULES = ("format",)
