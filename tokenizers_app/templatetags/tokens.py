"""``{{ token_bytes|token }}``: a token as safe, readable HTML, everywhere a token is shown;
``{{ version.special_tokens|tokens }}``: a list of them (the admin shows them with it too).

Every part is escaped (``format_html``); escapes such as ``<0xE4>`` and visible whitespace get
their own classes, so they read apart from literal text (``bpe.display`` has the convention).
"""

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

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


@register.filter
def tokens(values):
    """Each token as ``token`` shows it, in ``<code>``, space-separated; ``none`` for none."""
    shown = format_html_join(" ", "<code>{}</code>", ((token(value),) for value in values or ()))
    return shown or mark_safe("none")
