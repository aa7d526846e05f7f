"""``{{ token_bytes|token }}``: a token as safe, readable HTML, everywhere a token is shown;
``{{ version.special_tokens|tokens }}``: a list of them (the admin shows them with it too);
``{% token_groups groups %}``: the playground's strip of them.

Every part is escaped (``format_html``); escapes such as ``<0xE4>`` and visible whitespace get
their own classes, so they read apart from literal text (``bpe.display`` has the convention).
A page can show tens of thousands of tokens (the playground: 20,000 characters in each version
and two baselines), so a token's HTML is kept by its bytes, and the strip is joined here rather
than by a template loop, which took about 0.1 ms a token (5-7 s for the longest text).
"""

from functools import lru_cache

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from ..bpe.display import token_segments

register = template.Library()
COLORS = 5  # the strip's colors, c0..c4, one after the other


@register.filter
def token(value):
    if value is None:
        return ""
    data = value.encode() if isinstance(value, str) else bytes(value)  # memoryview on Postgres
    return _token_html(data)


@lru_cache(maxsize=65536)
def _token_html(data: bytes):
    parts = format_html_join("", '<span class="tok-{}">{}</span>',
                             ((kind, shown) for shown, kind in token_segments(data)))
    return format_html('<span class="tok">{}</span>', parts)


@register.filter
def tokens(values):
    """Each token as ``token`` shows it, in ``<code>``, space-separated; ``none`` for none."""
    shown = format_html_join(" ", "<code>{}</code>", ((token(value),) for value in values or ()))
    return shown or mark_safe("none")


@register.simple_tag
def token_groups(groups):
    """One colored span per group (the tokens that spell whole characters, from
    ``bpe.token_groups``), titled with its ids."""
    spans = format_html_join("", '<span class="tok-group c{}" title="{}">{}</span>', (
        (number % COLORS, _group_title(group["ids"]), _token_html(group["bytes"]))
        for number, group in enumerate(groups)))
    return format_html('<p class="token-strip">{}</p>', spans)


def _group_title(ids: list[int]) -> str:
    """``[7]`` -> ``"id 7"``; ``[226, 130]`` -> ``"ids 226, 130 (one character cut in 2
    tokens)"``."""
    if len(ids) == 1:
        return f"id {ids[0]}"
    return f"ids {', '.join(map(str, ids))} (one character cut in {len(ids)} tokens)"
