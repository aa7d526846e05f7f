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
from html import escape

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
    """The playground's strip: one span per group (the tokens that spell whole characters, from
    ``bpe.token_groups``), kept small because a strip can hold 20,000 of them: a short class
    (``t``, its color ``c0``..``c4``, ``s`` when a character is cut into several tokens, ``d``
    when another version cuts this text differently), its ids in ``data-i`` (shown on request,
    and in the detail panel), ``data-n`` for a cut character's token count, no title. A group
    that ends a line ends the strip's line too."""
    parts = []
    for number, group in enumerate(groups):
        ids = group["ids"]
        kind = f"t c{number % COLORS}"
        extra = ""
        if len(ids) > 1:
            kind += " s"
            extra = f' data-n="{len(ids)}"'
        if group.get("differs"):
            kind += " d"
        shown = _strip_html(group["bytes"])
        parts.append(f'<span class="{kind}" data-i="{" ".join(map(str, ids))}"{extra}>{shown}'
                     f'</span>{"<br>" if shown.endswith(NEWLINE) else ""}')
    return mark_safe(f'<p class="token-strip">{"".join(parts)}</p>')


NEWLINE = '<i class="w">↵</i>'
SHORT_KINDS = {"space": "w", "newline": "w", "tab": "w", "byte": "x", "control": "x"}


@lru_cache(maxsize=65536)
def _strip_html(data: bytes) -> str:
    """A token's text in the strip: escaped, its visible whitespace in ``<i class="w">`` and its
    escapes (``<0xE4>``, ``<U+200B>``) in ``<i class="x">``:
    ``_strip_html(b" <a\n") -> '<i class="w">·</i>&lt;a<i class="w">↵</i>'``."""
    return "".join(escape(shown) if kind == "text" else
                   f'<i class="{SHORT_KINDS[kind]}">{escape(shown)}</i>'
                   for shown, kind in token_segments(data))
