"""Storing corpora (``services.corpora``)."""

import io

import pytest

from tests.registry.helpers import (
    import_text,
    media_files,
)
from tokenizers_app.errors import Conflict, Invalid, TooLarge
from tokenizers_app.models import (
    Corpus,
    TrainingRun,
)
from tokenizers_app.services.corpora import import_corpus, import_staged_corpus, stage_corpus

pytestmark = pytest.mark.django_db

Status = TrainingRun.Status


# -- importing corpora ----------------------------------------------------------------------------

class TrickleStream:
    """A binary stream that hands out a few bytes per read, so characters straddle reads."""

    def __init__(self, data: bytes, step: int = 3):
        self.data, self.step, self.offset = data, step, 0

    def read(self, size: int) -> bytes:
        chunk = self.data[self.offset:self.offset + min(size, self.step)]
        self.offset += len(chunk)
        return chunk


def test_import_corpus_stores_the_bytes_under_a_content_name_with_hash_and_counts():
    text = "héllo wörld\nΓειά σου κόσμε\nsecond line"
    corpus = import_corpus(stream=TrickleStream(text.encode()), name="mixed",
                           original_filename="../../etc/passwd")

    assert corpus.path.read_bytes() == text.encode()
    assert corpus.path.name == f"{corpus.sha256}.txt"
    assert corpus.sha256 == __import__("hashlib").sha256(text.encode()).hexdigest()
    assert (corpus.size_bytes, corpus.line_count, corpus.char_count) == (
        len(text.encode()), 3, len(text))
    assert set(corpus.scripts) == {"Latin", "Greek"}
    assert corpus.original_filename == "passwd"  # its own name only, for display
    assert media_files("corpora", "incoming") == []


def test_importing_the_same_bytes_twice_gives_one_corpus():
    first = import_text("same text\n", "first")
    second = import_text("same text\n", "second")

    assert second.pk == first.pk and second.name == "first"
    assert Corpus.objects.count() == 1


def test_a_corpus_that_is_not_utf8_is_refused_naming_the_byte_offset_and_leaves_nothing():
    data = "ok line\n".encode() * 1000 + b"caf\xe9\n"

    with pytest.raises(ValueError, match=r"not valid UTF-8: byte 0xe9 at byte offset 8003"):
        import_corpus(stream=TrickleStream(data, step=7), name="latin1")

    assert not Corpus.objects.exists()
    assert media_files() == []


def test_a_corpus_whose_row_cannot_be_written_leaves_no_file(monkeypatch):
    def fail(**kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(Corpus.objects, "create", fail)
    with pytest.raises(RuntimeError):
        import_corpus(stream=io.BytesIO(b"some text\n"), name="lost")

    assert media_files("corpora") == []


def test_a_corpus_ending_in_half_a_character_is_refused():
    with pytest.raises(ValueError, match=r"byte 0xc3 at byte offset 3"):
        import_corpus(stream=io.BytesIO("abcé".encode()[:-1]), name="cut")
    assert not Corpus.objects.exists()


def test_an_empty_corpus_is_refused():
    with pytest.raises(ValueError, match="the corpus is empty"):
        import_text("", "empty")
    assert not Corpus.objects.exists()
    assert media_files() == []


def test_a_corpus_over_the_size_cap_is_refused(settings):
    settings.CORPUS_MAX_BYTES = 1000

    with pytest.raises(TooLarge, match="larger than the limit of 1000 bytes"):
        import_text("x" * 1001, "big")

    assert not Corpus.objects.exists()
    assert media_files() == []


def test_a_corpus_name_taken_by_other_content_is_refused(corpus):
    with pytest.raises(Conflict, match="already exists with other content") as refused:
        import_text("other text", corpus.name)
    assert refused.value.field == "name"
    assert Corpus.objects.count() == 1


@pytest.mark.parametrize("name", ["", "has space", "a@b", "-dash-first", "x" * 101])
def test_a_corpus_name_that_is_not_valid_is_refused(name):
    with pytest.raises(Invalid, match="name .* is not valid") as refused:
        import_text("text", name)
    assert refused.value.field == "name"
    assert not Corpus.objects.exists()


@pytest.mark.parametrize(("data", "message"), [
    ("utf-16 text\n".encode("utf-16"), "the corpus is UTF-16 .* convert it to UTF-8"),
    (b"text\x00more\n", "a NUL byte at byte offset 4: it looks like a binary file"),
    (b"ok\n" * 500_000 + b"\x00", "a NUL byte at byte offset 1500000"),
    (b" \n\t\r\n   \n", "the corpus holds only whitespace"),
    (__import__("gzip").compress(b"text\n" * 1000, mtime=0),  # the same id in every process
     "a compressed file \\(gzip or zip\\)"),
])
def test_text_that_is_not_a_corpus_is_refused_in_words_and_leaves_nothing(data, message):
    with pytest.raises(Invalid, match=message):
        import_corpus(stream=TrickleStream(data, step=1 << 20), name="bad")
    assert not Corpus.objects.exists()
    assert media_files() == []


@pytest.mark.parametrize(("given", "kept"), [
    ("../../etc/passwd", "passwd"), ("C:\\Users\\me\\web.txt", "web.txt"),
    ("we\x1bb\r\n.txt", "web.txt"), ("x" * 300 + ".txt", "x" * 255),
])
def test_the_uploaded_file_name_is_kept_plain(given, kept):
    corpus = import_corpus(stream=io.BytesIO(b"some text\n"), name="named",
                           original_filename=given)
    assert corpus.original_filename == kept
    assert corpus.path.name == f"{corpus.sha256}.txt"


def test_an_import_says_whether_it_made_the_corpus_or_found_it():
    def imported(name):
        return import_staged_corpus(staged=stage_corpus(io.BytesIO(b"some text\n")), name=name)

    made, created = imported("first")
    assert created and made.name == "first"
    assert imported("second") == (made, False)  # the same bytes: the corpus that holds them
    assert list(Corpus.objects.all()) == [made]
