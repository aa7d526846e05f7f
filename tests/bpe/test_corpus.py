"""Reading corpora: strict UTF-8 with the offset of the first bad byte, and lines up to a size."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenizers_app.bpe.corpus import StrictUtf8, read_blocks, read_lines


def test_a_bad_byte_is_named_with_its_offset_across_blocks():
    decoder = StrictUtf8("the corpus", hint="; convert it")
    assert decoder.decode("aé".encode()[:2]) == "a"  # é cut in half: held back
    with pytest.raises(ValueError, match=r"^the corpus is not valid UTF-8: byte 0xff at byte "
                                         r"offset 3; convert it$"):
        decoder.decode(b"\xa9\xff")


def test_a_stream_that_ends_inside_a_character_is_refused():
    decoder = StrictUtf8("x", offset=100)
    decoder.decode(b"ab\xe6\x97")
    with pytest.raises(ValueError, match="byte 0xe6 at byte offset 102"):
        decoder.decode(b"", final=True)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30), st.binary(min_size=1, max_size=4), st.integers(1, 7))
def test_the_offset_is_that_of_the_first_bad_byte_whatever_the_blocks(text, tail, block):
    data = text.encode() + b"\xff" + tail
    decoder = StrictUtf8("x")
    with pytest.raises(ValueError, match=f"at byte offset {len(text.encode())}$"):
        for start in range(0, len(data), block):
            decoder.decode(data[start:start + block])
        decoder.decode(b"", final=True)


def test_read_blocks_names_the_file(tmp_path):
    path = tmp_path / "c.txt"
    path.write_bytes(b"ok\n\xc3(")
    with pytest.raises(ValueError, match=r"corpus file .*c\.txt' is not valid UTF-8: byte 0xc3 at "
                                         r"byte offset 3"):
        list(read_blocks(path, block_bytes=2))


def test_read_lines_stops_at_the_line_that_crosses_the_limit(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("ab\ncdé\r\nlast", encoding="utf-8")
    assert list(read_lines(path, 100)) == ["ab\n", "cdé\r\n", "last"]
    assert list(read_lines(path, 4)) == ["ab\n", "cdé\r\n"]


def test_read_lines_never_reads_a_huge_line_whole(tmp_path):
    from tokenizers_app.bpe.corpus import LINE_SLACK

    path = tmp_path / "one-line.txt"
    path.write_text("x" * (10 * LINE_SLACK) + "\nnext\n", encoding="utf-8")
    assert [len(line) for line in read_lines(path, 1000)] == [1000 + LINE_SLACK]
