"""A rendered download as an HTTP answer, the same for the pages and the API: sent from its file
(sendfile where the server has it) or streamed from the bucket, gzipped for clients that accept
it, 304 when unchanged."""

from django.http import FileResponse, HttpResponse

from .storage import get_store


def artifact_response(request, download) -> HttpResponse:
    """A download as an attachment, sent from its file or streamed from the store.

    ``ETag`` is the sha256 of the bytes; to a client that accepts gzip the same bytes go gzipped
    (a quarter of the size for ``tokenizer.json``) with the weak ``W/"sha256"``. ``If-None-Match``
    holding either answers ``304`` (without reading the store)."""
    etag = f'"{download.sha256}"'
    gzipped = accepts_gzip(request.headers.get("Accept-Encoding", ""))
    if gzipped:
        etag = f"W/{etag}"
    headers = {"ETag": etag, "Vary": "Accept-Encoding"}
    if f'"{download.sha256}"' in request.headers.get("If-None-Match", ""):
        return HttpResponse(status=304, headers=headers)
    store = get_store()
    name = download.gzip_name if gzipped else download.name
    path = store.local_path(name)
    stream = path.open("rb") if path is not None else store.open(name)
    response = FileResponse(stream, as_attachment=True, filename=download.file_name,
                            content_type="application/octet-stream", headers=headers)
    if path is None and not gzipped:
        response["Content-Length"] = download.size
    if gzipped:
        response["Content-Encoding"] = "gzip"
    return response


def accepts_gzip(accept_encoding: str) -> bool:
    """``accepts_gzip("gzip, deflate, br") -> True``; ``"gzip;q=0"`` refuses it."""
    for coding in accept_encoding.lower().split(","):
        name, _, params = coding.strip().partition(";")
        if name.strip() in ("gzip", "x-gzip"):
            quality = params.strip().removeprefix("q=").strip()
            return quality == "" or quality.replace(".", "", 1).isdigit() and float(quality) > 0
    return False
