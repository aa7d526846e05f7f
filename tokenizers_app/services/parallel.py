"""Parallel sets: one content in several languages, each language an evaluation corpus of the
set (every ready version is then evaluated on it, as on any evaluation corpus), made from an
uploaded TSV / JSON Lines / ``.po`` zip, from existing corpora of equal line counts, or from
Django's own translations (the demo)."""

from __future__ import annotations

import io
from pathlib import Path

from django.conf import settings
from django.db import transaction

from ..bpe.parallel_text import ParallelText, po_catalogs, read_parallel
from ..errors import Conflict, Invalid
from ..models import Corpus, ParallelMember, ParallelSet, check_language, check_name
from .corpora import import_corpus, set_evaluation
from .permissions import OPERATOR, recorded

DEMO_MIN_MESSAGES = 200


def import_parallel_set(*, data: bytes, name: str, pivot: str = "en", original_filename: str = "",
                        uploaded_by=OPERATOR) -> ParallelSet:
    """Read an uploaded parallel text and store it as a set (``Invalid`` in words, naming the
    line, when it cannot be read)."""
    check_name("parallel set", name, field="name")
    pivot = check_language(pivot, field="pivot") or "en"
    if len(data) > settings.PARALLEL_MAX_BYTES:
        raise Invalid(f"the file is {len(data)} bytes, over PARALLEL_MAX_BYTES "
                      f"({settings.PARALLEL_MAX_BYTES}): split the set", field="file")
    try:
        text = read_parallel(data, original_filename, pivot)
    except ValueError as exc:
        raise Invalid(str(exc), field="file") from None
    return store_parallel_set(text=text, name=name, pivot=pivot,
                              original_filename=original_filename, uploaded_by=uploaded_by)


def store_parallel_set(*, text: ParallelText, name: str, pivot: str, original_filename: str = "",
                       uploaded_by=OPERATOR) -> ParallelSet:
    """One evaluation corpus per language (``NAME.LANG``), grouped as a set, all at once or
    none (a corpus file already moved into place without its row is left to the sweep)."""
    languages = {check_language(lang, field="file"): lines for lang, lines in text.lines.items()}
    _check_new_set(name, pivot, languages)
    with transaction.atomic():
        parallel = ParallelSet.objects.create(
            name=name, pivot=pivot, source_format=text.source_format,
            original_filename=original_filename[-255:], line_count=text.line_count,
            dropped_lines=text.dropped, skipped=dict(text.skipped),
            uploaded_by=recorded(uploaded_by))
        for language, lines in languages.items():
            data = ("\n".join(lines) + "\n").encode()
            _check_evaluated_whole(data, language)
            corpus = import_corpus(stream=io.BytesIO(data), name=f"{name}.{language}",
                                   language=language, uploaded_by=uploaded_by,
                                   is_evaluation=True)
            ParallelMember.objects.create(parallel_set=parallel, language=language,
                                          corpus=corpus)
    return parallel


def parallel_set_from_corpora(*, name: str, corpora: dict[str, Corpus], pivot: str = "en",
                              uploaded_by=OPERATOR) -> ParallelSet:
    """A set of existing corpora, ``{language: corpus}``, which must have equal line counts
    (they are taken as aligned line by line); each becomes an evaluation corpus (its uploader or
    staff only, as for any corpus) and gets the language when it has none."""
    check_name("parallel set", name, field="name")
    pivot = check_language(pivot, field="pivot") or "en"
    corpora = {check_language(lang, field="corpora"): c for lang, c in corpora.items()}
    counts = {lang: corpus.line_count for lang, corpus in corpora.items()}
    if len(corpora) < 2 or len(set(counts.values())) != 1:
        raise Invalid(f"a set takes two or more corpora of equal line counts: "
                      f"{', '.join(f'{lang} {n}' for lang, n in counts.items())}",
                      field="corpora")
    _check_new_set(name, pivot, corpora)
    with transaction.atomic():
        parallel = ParallelSet.objects.create(
            name=name, pivot=pivot, source_format=ParallelSet.Format.CORPORA,
            line_count=next(iter(counts.values())), uploaded_by=recorded(uploaded_by))
        for language, corpus in corpora.items():
            set_evaluation(corpus=corpus, is_evaluation=True, user=uploaded_by)
            if not corpus.language:
                corpus.set_language(language)
            ParallelMember.objects.create(parallel_set=parallel, language=language,
                                          corpus=corpus)
    return parallel


def django_translations_set(*, name: str = "django-messages",
                            min_messages: int = DEMO_MIN_MESSAGES) -> ParallelSet:
    """The demo's set: Django's own messages (``django/conf/locale/*/LC_MESSAGES/django.po``
    of the installed Django), English as the pivot, every language with at least
    ``min_messages`` translated messages."""
    import django

    from ..bpe.po_files import read_po

    files = []
    for path in sorted(Path(django.__file__).parent.glob("conf/locale/*/LC_MESSAGES/django.po")):
        data = path.read_bytes()
        if len(read_po(data, str(path)).messages) >= min_messages:
            files.append((str(path.relative_to(path.parents[3])), data))
    return store_parallel_set(text=po_catalogs(files, "en"), name=name, pivot="en",
                              original_filename="django/conf/locale/*/LC_MESSAGES/django.po")


def _check_new_set(name: str, pivot: str, languages: dict) -> None:
    """A new set's pivot must be one of its languages and its name free: pivot "fr" with
    languages {"en", "de"} raises ``Invalid`` ("... not one of the set's languages (de, en)"),
    a name already taken ``Conflict``."""
    if pivot not in languages:
        raise Invalid(f"the pivot {pivot!r} is not one of the set's languages "
                      f"({', '.join(sorted(languages))})", field="pivot")
    if ParallelSet.objects.filter(name=name).exists():
        raise Conflict(f"a parallel set named {name!r} already exists: choose another name",
                       field="name")


def _check_evaluated_whole(data: bytes, language: str) -> None:
    """Every line of every language is evaluated (a premium over a cut text would compare
    different lines)."""
    if settings.EVALUATION_MAX_BYTES and len(data) > settings.EVALUATION_MAX_BYTES:  # a cap set
        raise Invalid(f"the {language} text is {len(data)} bytes, over EVALUATION_MAX_BYTES "
                      f"({settings.EVALUATION_MAX_BYTES}), so it would not be evaluated whole: "
                      f"split the set", field="file")
