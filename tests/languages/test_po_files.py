"""The ``.po`` reader, on Django's own catalogs and on hostile files: every refusal names the
line; plural forms, empty, fuzzy and obsolete messages are skipped and counted."""

from pathlib import Path

import django
import pytest

from tokenizers_app.bpe.po_files import read_po

LOCALE = Path(django.__file__).parent / "conf" / "locale"
HEADER = b'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'


def test_every_catalog_django_ships_is_read():
    paths = sorted(LOCALE.glob("*/LC_MESSAGES/django.po"))
    assert len(paths) > 90
    read = {path.parts[-3]: read_po(path.read_bytes(), str(path)) for path in paths}
    german = read["de"]
    assert german.language == "de"
    assert len(german.messages) > 300
    assert german.messages[("", "Messages")] == "Mitteilungen"
    assert german.skipped["plural forms"] > 10


def test_a_msgid_spread_over_several_lines_is_joined_and_escapes_are_read():
    data = HEADER + (b'msgid ""\n"Enter a valid "\n"\\"value\\".\\n"\nmsgstr ""\n'
                     b'"Gib einen g\xc3\xbcltigen \\"Wert\\" ein.\\n"\n')
    assert read_po(data).messages == {("", 'Enter a valid "value".\n'):
                                      'Gib einen gültigen "Wert" ein.\n'}


def test_plural_empty_fuzzy_and_obsolete_messages_are_skipped_and_counted():
    data = HEADER + (b'msgid "one"\nmsgid_plural "many"\nmsgstr[0] "eins"\nmsgstr[1] "viele"\n\n'
                     b'msgid "Empty"\nmsgstr ""\n\n#, fuzzy\nmsgid "Maybe"\nmsgstr "Vielleicht"\n\n'
                     b'#~ msgid "Old"\n#~ msgstr "Alt"\n\nmsgid "Yes"\nmsgstr "Ja"\n')
    read = read_po(data)
    assert read.messages == {("", "Yes"): "Ja"}
    assert read.skipped == {"plural forms": 1, "empty translations": 1,
                            "fuzzy translations": 1, "obsolete": 1}


def test_a_context_keeps_two_messages_with_one_msgid_apart():
    data = HEADER + (b'msgctxt "month"\nmsgid "May"\nmsgstr "Mai"\n\n'
                     b'msgctxt "verb"\nmsgid "May"\nmsgstr "darf"\n')
    assert read_po(data).messages == {("month", "May"): "Mai", ("verb", "May"): "darf"}


def test_the_charset_the_header_names_is_used():
    data = (b'msgid ""\nmsgstr "Content-Type: text/plain; charset=ISO-8859-1\\n"\n\n'
            b'msgid "Yes"\nmsgstr "J\xe4"\n')
    assert read_po(data).messages == {("", "Yes"): "Jä"}


@pytest.mark.parametrize("body, said", [
    (b'msgid "a\\q"\nmsgstr "b"\n', "line 5: unknown escape \\q"),
    (b'msgid "a"\nmsgstr "b\xff"\n', "line 6: bytes that are not UTF-8"),
    (b'msgid "a\nmsgstr "b"\n', "line 5: a string must be in double quotes"),
    (b'msgid "a"b"\nmsgstr "b"\n', "line 5: a quote inside a string must be escaped"),
    (b'msgid "a"\nmsgstr "b\\"\n', "line 6: the string ends inside an escape"),
    (b'"orphan"\n', "line 5: a quoted string that follows no msgid"),
    (b'msgid "a"\nmsgstr "b"\nbogus line\n', "line 7: not a gettext line"),
    (b'msgid "a"\n\nmsgid "b"\nmsgstr "c"\n', "line 5: msgid 'a' has no msgstr"),
])
def test_a_hostile_file_is_refused_naming_its_line(body, said):
    with pytest.raises(ValueError) as refused:
        read_po(HEADER + body, "x.po")
    assert said.lower() in str(refused.value).lower()
    assert str(refused.value).startswith("x.po line")


def test_an_unknown_charset_is_refused_in_words():
    with pytest.raises(ValueError, match="charset 'klingon-8', which is not known"):
        read_po(b'msgid ""\nmsgstr "Content-Type: text/plain; charset=klingon-8\\n"\n')
