"""Lists come in pages: ``?page=1&page_size=50`` (at most ``MAX_PAGE_SIZE`` items a page)."""

from ninja import Schema

MAX_PAGE_SIZE = 100
MAX_PAGE = 1_000_000


class Page(Schema):
    count: int
    page: int
    page_size: int
    items: list[dict]


def page_of(queryset, page: int, page_size: int, shape) -> dict:
    page, page_size = min(max(1, page), MAX_PAGE), min(max(1, page_size), MAX_PAGE_SIZE)
    start = (page - 1) * page_size
    return {"count": queryset.count(), "page": page, "page_size": page_size,
            "items": [shape(item) for item in queryset[start:start + page_size]]}
