"""``/search/?q=``: the top bar's search box finds a tokenizer, a corpus or a version by name
(``NAME@NUMBER`` or ``NAME@ALIAS``; ``NAME@`` lists its versions)."""

from django.shortcuts import render

from ..models import Corpus, Tokenizer, TokenizerVersion
from .access import readable

FOUND_MOST = 50  # of each kind


@readable
def search(request):
    query = request.GET.get("q", "").strip()[:200]
    name = query.partition("@")[0].strip()
    found = {"tokenizers": [], "corpora": [], "versions": []}
    if query:
        found = {"tokenizers": Tokenizer.objects.with_latest().filter(name__icontains=name)
                 .order_by("name")[:FOUND_MOST],
                 "corpora": [] if "@" in query else Corpus.objects.filter(
                     name__icontains=name).order_by("name")[:FOUND_MOST],
                 "versions": TokenizerVersion.objects.searched(query)[:FOUND_MOST]}
    return render(request, "tokenizers_app/search.html", {"query": query, **found})
