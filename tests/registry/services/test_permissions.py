"""Owners own (``services.permissions``), through the workflows that call it: the user who
creates a tokenizer owns it, and only its owner or staff add versions to it (training into it,
importing into it); a run is cancelled by the user who started it or by staff; a corpus's
evaluation flag is switched by its uploader or by staff. The operator (a command without
``--user``) may do everything and is recorded as no user; a tokenizer without an owner is
staff-only."""

import pytest
from django.contrib.auth.models import AnonymousUser

from tests.registry.helpers import import_text, sample_text
from tokenizers_app.bpe import train_bpe
from tokenizers_app.bpe.formats import dumps_tokenizer
from tokenizers_app.errors import Forbidden
from tokenizers_app.models import Corpus, Tokenizer, TrainingRun
from tokenizers_app.services.corpora import set_evaluation
from tokenizers_app.services.permissions import (
    OPERATOR,
    check_staff,
    may_add_version,
    may_cancel,
    recorded,
)
from tokenizers_app.services.runs import cancel_training_run, start_training_run
from tokenizers_app.services.versions import import_tokenizer

pytestmark = pytest.mark.django_db


@pytest.fixture
def other(django_user_model):
    return django_user_model.objects.create_user("other")


@pytest.fixture
def files(corpus):
    """Two different tokenizers' files (two versions, once imported into one tokenizer)."""
    return [dumps_tokenizer(train_bpe(corpus.path, size).tokenizer(), "hf") for size in (300, 310)]


def start(corpus, name: str, user, vocab_size: int = 300) -> TrainingRun:
    return start_training_run(corpora=[corpus], tokenizer_name=name, vocab_size=vocab_size,
                              created_by=user)


def test_the_user_who_creates_a_tokenizer_owns_it_by_training_or_importing(corpus, files,
                                                                           member):
    start(corpus, "trained", member)
    import_tokenizer(files=files[0], tokenizer_name="imported", created_by=member)
    owners = dict(Tokenizer.objects.values_list("name", "owner"))
    assert owners == {"trained": member.pk, "imported": member.pk}


def test_only_the_owner_or_staff_train_into_a_tokenizer(corpus, member, other, staff):
    start(corpus, "mine", member)
    with pytest.raises(Forbidden, match="'mine' belongs to 'member': only its owner or staff") \
            as refused:
        start(corpus, "mine", other, vocab_size=310)
    assert refused.value.field == "tokenizer"
    assert not TrainingRun.objects.filter(created_by=other).exists()
    assert start(corpus, "mine", member, vocab_size=310).created_by == member
    assert start(corpus, "mine", staff, vocab_size=320).created_by == staff
    assert Tokenizer.objects.get(name="mine").owner == member  # staff's run does not take it


def test_the_owner_is_checked_before_the_parameters(corpus, member, other):
    start(corpus, "mine", member)
    with pytest.raises(Forbidden):
        start(corpus, "mine", other, vocab_size=1)  # out of bounds: the owner would get 400


def test_only_the_owner_or_staff_import_into_a_tokenizer(files, member, other, staff):
    import_tokenizer(files=files[0], tokenizer_name="mine", created_by=member)
    with pytest.raises(Forbidden, match="only its owner or staff"):
        import_tokenizer(files=files[1], tokenizer_name="mine", created_by=other)
    with pytest.raises(Forbidden):  # not even the same content: no answer about what it holds
        import_tokenizer(files=files[0], tokenizer_name="mine", created_by=other)
    assert Tokenizer.objects.get(name="mine").versions.count() == 1
    assert import_tokenizer(files=files[1], tokenizer_name="mine",
                            created_by=staff).number == 2


def test_a_tokenizer_without_an_owner_is_staff_only(files, member, staff):
    house = import_tokenizer(files=files[0], tokenizer_name="house")  # the operator's
    assert house.tokenizer.owner is None and house.created_by is None
    with pytest.raises(Forbidden, match="'house' has no owner: only its owner or staff"):
        import_tokenizer(files=files[1], tokenizer_name="house", created_by=member)
    assert import_tokenizer(files=files[1], tokenizer_name="house", created_by=staff).number == 2
    assert import_tokenizer(files=files[1], tokenizer_name="house").number == 2  # operator


def test_staff_may_change_the_owner_and_the_new_owner_adds_versions(files, member, other):
    import_tokenizer(files=files[0], tokenizer_name="mine", created_by=member)
    Tokenizer.objects.filter(name="mine").update(owner=other)  # as the admin does
    with pytest.raises(Forbidden):
        import_tokenizer(files=files[1], tokenizer_name="mine", created_by=member)
    assert import_tokenizer(files=files[1], tokenizer_name="mine", created_by=other).number == 2


def test_a_run_is_cancelled_by_who_started_it_or_by_staff(corpus, member, other, staff):
    runs = [start(corpus, f"t{i}", member) for i in range(3)]
    with pytest.raises(Forbidden, match="started by 'member': only the user who started it"):
        cancel_training_run(run=runs[0], user=other)
    runs[0].refresh_from_db()
    assert (runs[0].status, runs[0].cancel_requested) == ("queued", False)
    assert cancel_training_run(run=runs[0], user=member).status == "cancelled"
    assert cancel_training_run(run=runs[1], user=staff).status == "cancelled"
    assert cancel_training_run(run=runs[2]).status == "cancelled"  # the operator


def test_a_run_the_operator_started_is_cancelled_by_staff_only(corpus, member, staff):
    run = start_training_run(corpora=[corpus], tokenizer_name="house", vocab_size=300)
    assert run.created_by is None
    with pytest.raises(Forbidden, match="started by the operator"):
        cancel_training_run(run=run, user=member)
    assert cancel_training_run(run=run, user=staff).status == "cancelled"


def test_the_evaluation_flag_is_switched_by_its_uploader_or_by_staff(member, other, staff):
    mine = import_text(sample_text(5_000), "mine", uploaded_by=member)
    assert mine.uploaded_by == member
    with pytest.raises(Forbidden, match="uploaded by 'member': only its uploader or staff") \
            as refused:
        set_evaluation(corpus=mine, is_evaluation=True, user=other)
    assert refused.value.field == "evaluation"
    assert not Corpus.objects.get(name="mine").is_evaluation
    set_evaluation(corpus=mine, is_evaluation=True, user=member)
    set_evaluation(corpus=mine, is_evaluation=False, user=staff)
    assert not Corpus.objects.get(name="mine").is_evaluation


def test_uploading_the_same_bytes_as_evaluation_is_a_switch_of_the_flag(member, other):
    text = sample_text(5_000)
    import_text(text, "mine", uploaded_by=member)
    with pytest.raises(Forbidden):
        import_text(text, "again", uploaded_by=other, is_evaluation=True)
    assert not Corpus.objects.get(name="mine").is_evaluation
    assert import_text(text, "again", uploaded_by=other).name == "mine"  # reading it back: yes
    assert import_text(text, "again", uploaded_by=member, is_evaluation=True).is_evaluation


def test_nobody_anonymous_and_inactive_users_may_do_nothing(corpus, member, staff):
    tokenizer = Tokenizer.objects.create(name="open", owner=member)
    run = start(corpus, "open", member)
    member.is_active = staff.is_active = False
    for user in (None, AnonymousUser(), member, staff):
        assert not may_add_version(user, tokenizer) and not may_add_version(user, None)
        assert not may_cancel(user, run)
        with pytest.raises(Forbidden, match="only staff can move aliases"):
            check_staff(user, "move aliases")
    assert may_add_version(OPERATOR, tokenizer) and may_cancel(OPERATOR, run)
    assert recorded(OPERATOR) is None and recorded(member) is member
