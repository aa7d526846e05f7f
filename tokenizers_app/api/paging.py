"""Lists come in pages: ``?page=1&page_size=50`` (at most ``MAX_PAGE_SIZE`` items a page)."""

from ninja import Schema

from ..shapes import CorpusOut, TokenizerOut, VersionOut

MAX_PAGE_SIZE = 100
MAX_PAGE = 1_000_000


class Page(Schema):
    count: int
    page: int
    page_size: int


class TokenizerPage(Page):
    items: list[TokenizerOut]


class VersionPage(Page):
    items: list[VersionOut]


class CorpusPage(Page):
    items: list[CorpusOut]


def page_of(queryset, page: int, page_size: int, shape) -> dict:
    """One page of ``queryset``, each item as ``shape(item)``."""
    page, page_size = min(max(1, page), MAX_PAGE), min(max(1, page_size), MAX_PAGE_SIZE)
    start = (page - 1) * page_size
    return {"count": queryset.count(), "page": page, "page_size": page_size,
            "items": [shape(item) for item in queryset[start:start + page_size]]}
