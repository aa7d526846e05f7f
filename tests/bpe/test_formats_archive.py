import io
import zipfile

from tokenizers_app.bpe.formats.archive import download_file, zip_files


def test_a_zip_of_the_same_files_is_byte_identical_whatever_their_order():
    one = zip_files({"vocab.json": b"{}", "merges.txt": b"#version: 0.2\n"}, "t-gpt2")
    two = zip_files({"merges.txt": b"#version: 0.2\n", "vocab.json": b"{}"}, "t-gpt2")
    assert one == two
    names = zipfile.ZipFile(io.BytesIO(one)).namelist()
    assert names == ["t-gpt2/merges.txt", "t-gpt2/vocab.json"]


def test_one_file_is_downloaded_as_it_is_and_several_as_a_zip():
    assert download_file({"web.json": b"{}"}, "web", "hf") == ("tokenizer.json", b"{}")
    assert download_file({"web.model": b"m"}, "web", "minbpe") == ("web.model", b"m")
    name, data = download_file({"a": b"1", "b": b"2"}, "web", "gpt2")
    assert name == "web-gpt2.zip" and zipfile.ZipFile(io.BytesIO(data)).read("web-gpt2/a") == b"1"
