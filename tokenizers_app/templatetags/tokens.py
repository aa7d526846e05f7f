"""``{{ token_bytes|token }}``: a token as safe, readable HTML, everywhere a token is shown.

Every part is escaped (``format_html``); escapes such as ``<0xE4>`` and visible whitespace get
their own classes, so they read apart from literal text (``bpe.display`` has the convention).
"""

from django import template
from django.utils.html import format_html, format_html_join

from ..bpe.display import token_segments

register = template.Library()


@register.filter
def token(value):
    if value is None:
        return ""
    data = value.encode() if isinstance(value, str) else bytes(value)  # memoryview on Postgres
    parts = format_html_join("", '<span class="tok-{}">{}</span>',
                             ((kind, shown) for shown, kind in token_segments(data)))
    return format_html('<span class="tok">{}</span>', parts)
