"""The HTTP API (django-ninja): ``/api/``, its OpenAPI 3.1 schema at ``/api/openapi.json`` and
its browsable docs at ``/api/docs``. It calls the same workflows as the pages and the commands,
and answers their errors as JSON ``{"detail": ...}`` with the right status (``errors``)."""

from ninja import NinjaAPI

from . import compare, corpora, diffs, errors, parallel, runs, tokenizers

api = NinjaAPI(title="Tokenizer Registry", version="1", urls_namespace="api",
               description="Fetch tokenizer versions in any format, encode, train and import. "
                           "Reads are anonymous by default; writes need `Authorization: Bearer "
                           "<key>` (`manage.py create_api_key USER`) or a signed-in session.")
api.add_router("/tokenizers", tokenizers.router)
api.add_router("/corpora", corpora.router)
api.add_router("/runs", runs.router)
api.add_router("/compare", compare.router)
api.add_router("/parallel-sets", parallel.router)
api.add_router("/diff", diffs.router)
errors.install(api)
