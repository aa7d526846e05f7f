"""The broker kept in files publishes each message whole: until it is complete no worker can
take it (kombu's own transport let a worker take a message still being written and die on it,
which failed one run of the test suite in a few dozen)."""

import os
import subprocess
import sys
from pathlib import Path
from queue import Empty

import pytest
from kombu import Connection

from registry import broker

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def channel(tmp_path):
    folder = str(tmp_path)
    options = {"data_folder_in": folder, "data_folder_out": folder, "store_processed": False}
    with Connection("filesystem://", transport="registry.broker:Transport",
                    transport_options=options) as connection:
        yield connection.default_channel


def test_a_message_is_invisible_to_readers_until_it_is_whole(channel, monkeypatch):
    seen_while_writing = []
    replace = os.replace

    def look_then_replace(source, target):
        try:
            seen_while_writing.append(channel._get("jobs"))
        except Empty:
            seen_while_writing.append(None)
        replace(source, target)

    monkeypatch.setattr(broker.os, "replace", look_then_replace)
    channel._put("jobs", {"body": "x" * 100_000})

    assert seen_while_writing == [None]
    assert channel._get("jobs") == {"body": "x" * 100_000}
    with pytest.raises(Empty):
        channel._get("jobs")


def test_the_registry_uses_it_for_the_embedded_broker(tmp_path):
    """Checked in a fresh process with no broker set (this session's may be Redis)."""
    show = ("import django; django.setup(); from registry.celery import app\n"
            "with app.connection_for_write() as c: print(type(c.transport).__module__)")
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "CACHE_URL")}
    shown = subprocess.run([sys.executable, "-c", show], cwd=REPO, capture_output=True,
                           text=True, timeout=60,
                           env={**env, "REGISTRY_VAR_DIR": str(tmp_path), "DEBUG": "1",
                                "DJANGO_SETTINGS_MODULE": "registry.settings"})
    assert shown.stdout.strip() == "registry.broker", shown.stderr


def test_a_failed_write_leaves_no_file(channel, tmp_path, monkeypatch):
    def full(source, target):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(broker.os, "replace", full)
    from kombu.exceptions import ChannelError

    with pytest.raises(ChannelError):
        channel._put("jobs", {"body": "x"})
    assert list(tmp_path.iterdir()) == []


def test_a_message_that_cannot_be_read_is_dropped_and_the_next_one_taken(channel, tmp_path):
    (tmp_path / "1_damaged.jobs.msg").write_bytes(b'{"cut sho')
    channel._put("jobs", {"body": "next"})
    assert channel._get("jobs") == {"body": "next"}
    with pytest.raises(Empty):
        channel._get("jobs")
