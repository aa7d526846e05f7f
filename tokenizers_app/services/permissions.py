"""Who may change what: the registry's ownership rules, written once. The workflows call the
``check_*`` functions, which raise ``Forbidden`` in words; the pages ask the ``may_*`` ones
to show only the buttons a user may press. Reads are open to all and are not checked here.

- Add a version to a tokenizer (train into it, import into it): its owner, or staff. A
  tokenizer without an owner (made before owners existed, or by the operator) is staff-only.
  A new name: any signed-in user, who becomes its owner.
- Cancel a run: the user who started it, or staff. Cancel an evaluation: its tokenizer's
  owner, its corpus's uploader, or staff.
- Switch a corpus's evaluation flag: its uploader, or staff.
- Publish, deprecate and annotate versions, move aliases: staff.
- Delete a corpus, a tokenizer or a run that nothing depends on (``services.deletions``): its
  uploader, owner or starter, or staff.

``OPERATOR`` is whoever runs a management command without ``--user`` (and the demo loader): it
has full rights, as the person who already holds the server and its database, and is recorded
as no user. ``None`` is nobody, and may do nothing.
"""

from __future__ import annotations

from ..errors import Forbidden


class Operator:
    """The server's operator: a management command run without ``--user``. Full rights."""

    def __repr__(self) -> str:
        return "OPERATOR"


OPERATOR = Operator()


def recorded(user):
    """The user to record as creator, owner or uploader: ``None`` for the operator."""
    return None if user is OPERATOR else user


def is_staff(user) -> bool:
    """``is_staff(OPERATOR) -> True``; an active staff user; never ``None`` or anonymous."""
    return user is OPERATOR or bool(user is not None and user.is_active and user.is_staff)


def _is_owner(user, owner_id: int | None) -> bool:
    """Whether ``user`` is the signed-in, active owner ``owner_id`` (no owner: nobody is)."""
    return (owner_id is not None and user is not None and user is not OPERATOR
            and user.is_authenticated and user.is_active and user.pk == owner_id)


def _signed_in(user) -> bool:
    return user is OPERATOR or bool(user is not None and user.is_authenticated
                                    and user.is_active)


def _owner_name(user) -> str:
    return repr(user.get_username()) if user is not None else "nobody"


def may_add_version(user, tokenizer) -> bool:
    """Whether ``user`` may add a version to ``tokenizer`` (``None``: a new name)."""
    if tokenizer is None:
        return _signed_in(user)
    return is_staff(user) or _is_owner(user, tokenizer.owner_id)


def check_may_add_version(user, tokenizer, name: str = "") -> None:
    """``Forbidden`` (about the field ``tokenizer``) unless ``user`` may add a version to
    ``tokenizer`` (``None``: the new name ``name``)."""
    if may_add_version(user, tokenizer):
        return
    if tokenizer is None:
        raise Forbidden(f"sign in to create the tokenizer {name!r}", field="tokenizer")
    owner = (f"belongs to {_owner_name(tokenizer.owner)}" if tokenizer.owner_id
             else "has no owner")
    raise Forbidden(f"tokenizer {tokenizer.name!r} {owner}: only its owner or staff can add a "
                    f"version to it (by training or importing); use a new tokenizer name",
                    field="tokenizer")


def may_cancel(user, run) -> bool:
    """Whether ``user`` may cancel ``run``: the user who started it, or staff."""
    return is_staff(user) or _is_owner(user, run.created_by_id)


def check_may_cancel(user, run) -> None:
    if not may_cancel(user, run):
        who = (f"was started by {_owner_name(run.created_by)}" if run.created_by_id
               else "was started by the operator")
        raise Forbidden(f"run {run.pk} {who}: only the user who started it or staff can "
                        f"cancel it")


def may_cancel_evaluation(user, evaluation) -> bool:
    """Whether ``user`` may cancel ``evaluation``: its tokenizer's owner, its corpus's uploader,
    or staff."""
    return (is_staff(user) or _is_owner(user, evaluation.version.tokenizer.owner_id)
            or _is_owner(user, evaluation.corpus.uploaded_by_id))


def check_may_cancel_evaluation(user, evaluation) -> None:
    if not may_cancel_evaluation(user, evaluation):
        raise Forbidden(f"only the owner of {evaluation.version.tokenizer.name!r}, the uploader "
                        f"of {evaluation.corpus.name!r} or staff can cancel its evaluation")


def may_switch_evaluation(user, corpus) -> bool:
    """Whether ``user`` may switch ``corpus``'s evaluation flag: its uploader, or staff."""
    return is_staff(user) or _is_owner(user, corpus.uploaded_by_id)


def check_may_switch_evaluation(user, corpus) -> None:
    if not may_switch_evaluation(user, corpus):
        who = (f"was uploaded by {_owner_name(corpus.uploaded_by)}" if corpus.uploaded_by_id
               else "has no uploader")
        raise Forbidden(f"corpus {corpus.name!r} {who}: only its uploader or staff can change "
                        f"whether it is an evaluation corpus", field="evaluation")


def check_staff(user, action: str) -> None:
    """``Forbidden`` unless ``user`` is staff: ``check_staff(user, "move aliases")``."""
    if not is_staff(user):
        raise Forbidden(f"only staff can {action}")


def may_delete(user, owner_id: int | None) -> bool:
    """Whether ``user`` may delete a corpus, tokenizer or run whose uploader, owner or starter
    is ``owner_id``: that user, or staff."""
    return is_staff(user) or _is_owner(user, owner_id)


def check_may_delete(user, what: str, owner, role: str) -> None:
    """``check_may_delete(user, "corpus 'web'", corpus.uploaded_by, "uploader")``."""
    if not may_delete(user, getattr(owner, "pk", None)):
        who = f"its {role} is {_owner_name(owner)}" if owner is not None else f"it has no {role}"
        raise Forbidden(f"{what} cannot be deleted by you: {who}, and only its {role} or staff "
                        f"may delete it")
