"""``/tokenizers/import/``: tokenizer files made elsewhere become a version, as the API's import
and ``manage.py import_tokenizer`` make one (``services.versions.import_tokenizer``)."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from ..errors import RegistryError
from ..forms import ImportForm, add_service_error
from ..models import check_name
from ..services.import_notes import pattern_note, special_tokens_from_json
from ..services.versions import check_may_add_to, import_or_find_tokenizer
from ..uploads import receives_upload


@login_required
@receives_upload  # its files are read only once sign-in and CSRF passed
def tokenizer_import(request):
    """The form; a valid import lands on the version's page, with what was assumed of its
    pattern. The same files twice give the version that holds them, and say so."""
    form = ImportForm(request.POST if request.method == "POST" else None,
                      initial={"tokenizer": request.GET.get("tokenizer", "")})
    status = 200
    if request.method == "POST":
        files = request.FILES.getlist("files")
        valid = form.is_valid()
        status = _name_refused(form, request.user)  # said beside the files' error, if any
        if not files:
            form.add_error(None, "choose the tokenizer's files (tokenizer.json, vocab.json and "
                                 "merges.txt, a .tiktoken file, ...)")
            status = 400 if status == 200 else status
        elif sum(upload.size for upload in files) > settings.TOKENIZER_IMPORT_MAX_BYTES:
            form.add_error(None, f"tokenizer files over {settings.TOKENIZER_IMPORT_MAX_BYTES} "
                                 f"bytes are refused (TOKENIZER_IMPORT_MAX_BYTES)")
            status = 413
        elif not valid or status != 200:
            status = status if status != 200 else 400
        else:
            version, status = _import(request, form, files)
            if version is not None:
                return redirect("version", name=version.tokenizer.name, ref=version.number)
    return render(request, "tokenizers_app/tokenizer_import.html",
                  {"form": form, "max_bytes": settings.TOKENIZER_IMPORT_MAX_BYTES}, status=status)


def _name_refused(form, user) -> int:
    """The status of the tokenizer name's refusal (a bad name, or a tokenizer ``user`` may not
    add to), said beside its field; 200 when there is none."""
    name = form.cleaned_data.get("tokenizer")
    try:
        if name:
            check_name("tokenizer", name)
            check_may_add_to(name=name, user=user)
    except RegistryError as refused:
        return add_service_error(form, refused)
    return 200


def _import(request, form, files):
    """``(version, 201)``, or ``(None, status)`` with the reason on the form."""
    data = form.cleaned_data
    contents = {upload.name: upload.read() for upload in files}
    names = ", ".join(sorted(contents))
    format, pattern = data["format"] or None, form.pattern_value()
    try:
        version, created = import_or_find_tokenizer(
            files=contents, tokenizer_name=data["tokenizer"], format=format, pattern=pattern,
            created_by=request.user, special_tokens=special_tokens_from_json(
                data["special_tokens"]),
            source_detail=f"imported in the browser from {names}")
    except (RegistryError, ValueError) as exc:
        return None, add_service_error(form, exc)
    if not created:
        messages.info(request, f"these files hold {version.label}, which was already here: no "
                               f"new version was made")
    else:
        messages.success(request, f"{version.label} imported from {names}: {version.vocab_size} "
                                  f"tokens, {version.merge_count} merges")
    note = pattern_note(version=version, files=contents, format=format, pattern=pattern)
    if note:  # GPT-2 files: an assumed pattern is a warning, a chosen or known one is said back
        (messages.info if pattern or note.startswith("recognised") else messages.warning)(
            request, note)
    return version, 201
