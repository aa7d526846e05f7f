"""``{{ token_bytes|token }}``: a token as safe, readable HTML, everywhere a token is shown;
``{{ version.special_tokens|tokens }}``: a list of them (the admin shows them with it too);
``{% token_groups groups %}``: the playground's strip of them.

Every part is escaped (``format_html``); escapes such as ``<0xE4>`` and visible whitespace get
their own classes, so they read apart from literal text (``bpe.display`` has the convention).
A page can show tens of thousands of tokens (the playground: 20,000 characters in each version
and two baselines), so a token's HTML is kept by its bytes, and the strip is joined here rather
than by a template loop, which was too slow for the longest text (bench/HISTORY.md).
"""

from functools import lru_cache
from html import escape

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from ..bpe.display import token_segments

register = template.Library()


@register.filter
def token(value, word_end=""):
    """``{{ entry.token|token }}``; a character-level version's tokens with its end-of-word
    suffix, ``{{ entry.token|token:version.word_end }}``, show it as a word end."""
    if value is None:
        return ""
    data = value.encode() if isinstance(value, str) else bytes(value)  # memoryview on Postgres
    return _token_html(data, word_end or "")


@lru_cache(maxsize=65536)
def _token_html(data: bytes, word_end: str = ""):
    parts = format_html_join("", '<span class="tok-{}"{}>{}</span>',
                             ((kind, mark_safe(' title="end of word"') if kind == "wordend"
                               else "", shown)
                              for shown, kind in token_segments(data, word_end)))
    return format_html('<span class="tok">{}</span>', parts)


@register.filter
def token_length(value, word_end=""):
    """A token's length in bytes; a character-level token's without its end-of-word suffix."""
    data = bytes(value)
    suffix = (word_end or "").encode()
    return len(data[:-len(suffix)] if suffix and data.endswith(suffix) and data != suffix
               else data)


@register.filter
def tokens(values):
    """Each token as ``token`` shows it, in ``<code>``, space-separated; ``none`` for none."""
    shown = format_html_join(" ", "<code>{}</code>", ((token(value),) for value in values or ()))
    return shown or mark_safe("none")


@register.simple_tag
def token_groups(groups):
    """The playground's strip: one span per group (the tokens that spell whole characters, from
    ``bpe.token_groups``), kept small because a strip can hold 20,000 of them: its ids in
    ``data-i`` (shown on request, and in the detail panel), a class only when marked (``s``: a
    character cut into several tokens, ``data-n`` of them; ``d``: another version cuts this
    text differently; ``u``: a character outside a character-level version's alphabet, which
    encodes to ``<unk>``), no title; the colors come from the stylesheet (``nth-of-type``). A group
    that holds a newline ends the strip's line."""
    parts = []
    for group in groups:
        ids = group["ids"]
        marks = ("s" if len(ids) > 1 else "") + (" d" if group.get("differs") else "") + \
            (" u" if group.get("unknown") else "")
        extra = f' class="{marks.strip()}"' if marks else ""
        if len(ids) > 1:
            extra += f' data-n="{len(ids)}"'
        shown = _strip_html(group["bytes"])
        parts.append(f'<span data-i="{" ".join(map(str, ids))}"{extra}>{shown}</span>'
                     + ("<br>" if b"\n" in group["bytes"] else ""))
    return mark_safe(f'<p class="token-strip">{"".join(parts)}</p>')


@lru_cache(maxsize=65536)
def _strip_html(data: bytes) -> str:
    """A token's text in the strip: escaped, its visible whitespace in ``<i>`` and its escapes
    (``<0xE4>``, ``<U+200B>``) in ``<i class="x">``, a run of either in one:
    ``_strip_html(b"\\n  <a") -> '<i>↵··</i>&lt;a'``."""
    runs: list[list[str]] = []  # [kind, shown]
    for shown, kind in token_segments(data):
        kind = SHORT_KINDS.get(kind, kind)
        if runs and runs[-1][0] == kind:
            runs[-1][1] += shown
        else:
            runs.append([kind, shown])
    return "".join(escape(shown) if kind == "text" else
                   f'<i>{escape(shown)}</i>' if kind == "w" else f'<i class="x">{escape(shown)}</i>'
                   for kind, shown in runs)


SHORT_KINDS = {"space": "w", "newline": "w", "tab": "w", "byte": "x", "control": "x"}
