"""``/diff/?from=A@1&to=B@2[&corpus=C][&search=...]``: what changed between two versions."""

from django.shortcuts import render

from ..errors import REFUSALS
from ..models import Corpus, TokenizerVersion
from ..services.diffs import diff_versions
from .access import readable

VERDICTS = {"identical": "identical", "extends": "extends",
            "same_tokens_other_ids": "same tokens, other ids", "incompatible": "incompatible"}


@readable
def diff(request):
    asked = {name: request.GET.get(name, "").strip() for name in ("from", "to", "corpus",
                                                                 "search")}
    found, errors, status = None, [], 200
    if asked["from"] and asked["to"]:
        try:
            versions = TokenizerVersion.objects.select_related("tokenizer")
            corpus = Corpus.objects.by_names([asked["corpus"]])[0] if asked["corpus"] else None
            found = diff_versions(old=versions.resolve(asked["from"]),
                                  new=versions.resolve(asked["to"]), corpus=corpus,
                                  search=asked["search"])
        except REFUSALS as exc:
            errors.append(str(exc))
            status = getattr(exc, "status", 400)
    return render(request, "tokenizers_app/diff.html", {
        "asked": asked, "found": found, "errors": errors,
        "verdict": VERDICTS.get(found["verdict"]) if found else None,
        "corpora": Corpus.objects.order_by("name")}, status=status)
