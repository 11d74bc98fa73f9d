"""The card as files: model_card.json and model_card.html (Jinja2, template.html.jinja)."""
import json
import os
from typing import Dict

from core.contract import MODEL_CARD_HTML, MODEL_CARD_JSON

TEMPLATE_DIR = os.path.dirname(__file__)
TEMPLATE = "template.html.jinja"


def render_html(card: dict) -> str:
    """The card as one self-contained HTML page (autoescaped: labels are user data)."""
    import jinja2
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
                                     autoescape=True, undefined=jinja2.StrictUndefined)
    return environment.get_template(TEMPLATE).render(**card)


def card_files(card: dict) -> Dict[str, bytes]:
    """{file name: bytes} of the card's two files, for a version folder."""
    return {MODEL_CARD_JSON: (json.dumps(card, indent=2, ensure_ascii=False) + "\n").encode(),
            MODEL_CARD_HTML: render_html(card).encode()}
