"""The store interface against a real S3 server (SeaweedFS): objects written whole or not at
all, ranged reads, listings, errors in words, and the local cache by sha256."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from tokenizers_app.errors import StoreUnavailable
from tokenizers_app.storage import get_store, local_copy

from .conftest import point_settings_at

MB = 1 << 20


def test_a_multipart_object_exists_only_once_committed(bucket, weed, settings):
    settings.STORAGE_PART_BYTES = 5 * MB
    store = get_store()
    data = bytes(range(256)) * (12 * MB // 256)  # three parts: 5 + 5 + 2 MB
    writer = store.writer("corpora/big.bin")
    for start in range(0, len(data), MB):
        writer.write(data[start:start + MB])
    assert writer.upload_id is not None and len(writer.parts) == 2  # sent as they filled
    assert weed.objects(bucket) == {}  # nothing readable before the commit
    writer.commit()
    assert weed.objects(bucket) == {"registry/corpora/big.bin": len(data)}
    assert store.read_range("corpora/big.bin", 5 * MB - 3, 5 * MB + 3) == data[5 * MB - 3:
                                                                            5 * MB + 3]
    assert store.read_bytes("corpora/big.bin") == data
    assert weed.unfinished_uploads(bucket) == []


def test_an_aborted_write_leaves_no_object_and_no_unfinished_upload(bucket, weed, settings):
    settings.STORAGE_PART_BYTES = 5 * MB
    with pytest.raises(RuntimeError), get_store().writer("corpora/x.bin") as writer:
        writer.write(b"a" * (6 * MB))
        raise RuntimeError("the writer fails mid-way")
    assert weed.objects(bucket) == {} and weed.unfinished_uploads(bucket) == []


def test_list_move_delete_and_a_missing_object(bucket, weed):
    store = get_store()
    store.write_bytes("runs/1/attempt-1/part-0.json", b"{}")
    store.write_bytes("runs/1/attempt-1/part-1.json", b"{}")
    store.write_bytes("a.part", b"abc")
    assert [e.name for e in store.list("runs/")] == ["runs/1/attempt-1/part-0.json",
                                                     "runs/1/attempt-1/part-1.json"]
    store.move("a.part", "corpora/a.txt")
    assert store.read_bytes("corpora/a.txt") == b"abc" and not store.exists("a.part")
    store.delete_prefix("runs/1/attempt-1/")
    assert sorted(weed.objects(bucket)) == ["registry/corpora/a.txt"]
    with pytest.raises(FileNotFoundError, match="no such object in the object store") as gone:
        store.read_range("corpora/gone.txt", 0, 10)
    assert gone.value.filename == "corpora/gone.txt"
    assert store.read_range("corpora/a.txt", 2, 100) == b"c"
    assert store.read_range("corpora/a.txt", 3, 100) == b""


def test_a_missing_bucket_and_an_unreachable_store_are_said_in_words(bucket, weed, settings):
    point_settings_at(settings, weed, "no-such-bucket-here")
    with pytest.raises(StoreUnavailable) as missing:
        get_store().check()
    assert str(missing.value).startswith("the object store does not answer: its bucket is "
                                         "missing (the server's log says which)")
    assert "no-such-bucket-here" not in str(missing.value)  # the internal text says which:
    assert missing.value.internal.startswith("the bucket 'no-such-bucket-here' does not exist "
                                             "at http://127.0.0.1")
    with pytest.raises(SystemCheckError, match="does not exist"):
        call_command("check", stdout=io.StringIO(), stderr=io.StringIO())
    settings.STORAGE_OPTIONS = {**settings.STORAGE_OPTIONS,
                                "endpoint_url": "http://127.0.0.1:9"}  # nothing listens there
    with pytest.raises(StoreUnavailable, match="does not answer"):
        get_store().write_bytes("x", b"y")
    with pytest.raises(SystemCheckError, match=r"s3://no-such-bucket-here/registry \(at "
                                               r"http://127.0.0.1:9\) does not answer"):
        call_command("check", stdout=io.StringIO(), stderr=io.StringIO())


def test_check_passes_when_the_bucket_answers(bucket):
    out = io.StringIO()
    call_command("check", stdout=out)
    assert "no issues" in out.getvalue()


def test_local_copies_are_kept_by_sha256_within_the_budget(bucket, settings, tmp_path):
    import hashlib

    store = get_store()
    texts = [f"text {i}\n".encode() * 1000 for i in range(3)]  # 7-8 KB each
    for i, text in enumerate(texts):
        store.write_bytes(f"corpora/{i}.txt", text)
    settings.STORAGE_CACHE_BYTES, settings.STORAGE_CACHE_DIR = 20_000, str(tmp_path / "cache")
    for i, text in enumerate(texts):
        sha = hashlib.sha256(text).hexdigest()
        with local_copy(store, f"corpora/{i}.txt", sha, len(text)) as path:
            assert path.read_bytes() == text and path.name == f"{sha}.txt"
    kept = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert len(kept) == 2 and f"{hashlib.sha256(texts[2]).hexdigest()}.txt" in kept
    settings.STORAGE_CACHE_BYTES = 0  # no room: a copy for the time of use only
    with local_copy(store, "corpora/0.txt", hashlib.sha256(texts[0]).hexdigest(),
                    len(texts[0])) as path:
        assert path.read_bytes() == texts[0]
    assert not path.exists()


def test_a_local_copy_that_does_not_check_out_is_refused(bucket, settings, tmp_path):
    from tokenizers_app.errors import Damaged

    settings.STORAGE_CACHE_DIR = str(tmp_path / "cache")
    get_store().write_bytes("corpora/x.txt", b"changed\n")
    with pytest.raises(Damaged, match="is not what was stored"), \
            local_copy(get_store(), "corpora/x.txt", "0" * 64, 8):
        pass
    assert list((tmp_path / "cache").iterdir()) == []


def test_create_bucket_makes_the_missing_bucket_once(weed, settings, tmp_path):
    import uuid

    name = f"made-{uuid.uuid4().hex[:12]}"
    point_settings_at(settings, weed, name)
    out = io.StringIO()
    call_command("create_bucket", stdout=out)
    call_command("create_bucket", stdout=out)
    assert out.getvalue().splitlines() == [
        f"the object store s3://{name}/registry (at {weed.endpoint}): created",
        f"the object store s3://{name}/registry (at {weed.endpoint}): ready"]
    get_store().check()


def test_a_test_server_whose_port_is_taken_starts_on_other_ports(tmp_path):
    """The test harness itself: CI once lost a weed port to another process between the pick and
    the bind; the first start then picks new ports instead of failing the session."""
    import socket

    from .weed import Weed

    server = Weed(tmp_path)
    taken = socket.socket()
    taken.bind(("127.0.0.1", server.ports["volume.port"]))
    taken.listen()
    try:
        server.start()
        assert server.ports["volume.port"] != taken.getsockname()[1]
        assert server.client().list_buckets()["Buckets"] == []
    finally:
        server.stop()
        taken.close()
