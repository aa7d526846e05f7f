"""``{% vendor_script "htmx" %}``: a vendored library's ``<script>`` with its integrity hash, as
recorded in ``static/tokenizers_app/vendor/VENDOR.json`` (``manage.py vendor_js`` writes it).

Scripts are not deferred: the page's own inline scripts, which follow them, call them at once.
"""

import functools
import json
from pathlib import Path

from django import template
from django.templatetags.static import static
from django.utils.html import format_html

MANIFEST = Path(__file__).resolve().parent.parent / "static" / "tokenizers_app" / "vendor" / \
    "VENDOR.json"

register = template.Library()


@functools.cache
def manifest() -> dict:
    return json.loads(MANIFEST.read_text())


@register.simple_tag
def vendor_script(name: str):
    entry = manifest()[name]
    return format_html('<script src="{}" integrity="{}" crossorigin="anonymous"></script>',
                       static(f"tokenizers_app/vendor/{entry['file']}"), entry["sha384"])
