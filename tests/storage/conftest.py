"""Fixtures for the tests against a real S3 server (SeaweedFS, ``tests/storage/weed.py``).

``weed``: one server per test session (each xdist worker its own), and ``bucket``: a new
bucket in it per test, with the settings pointed at it (``STORAGE_URL`` and the keys).
``own_weed``: a server apart from the session's, for the tests that stop it."""

import pytest

from .weed import Weed


@pytest.fixture(scope="session")
def weed(tmp_path_factory):
    server = Weed(tmp_path_factory.mktemp("weed")).start()
    yield server
    server.stop()  # its folder is temporary: nothing to keep


@pytest.fixture(scope="module")
def module_weed(tmp_path_factory):
    server = Weed(tmp_path_factory.mktemp("own-weed")).start()
    yield server
    server.stop()  # its folder is temporary: nothing to keep


@pytest.fixture
def own_weed(module_weed):
    """A server that the test may stop (shared by the tests of a module, each with buckets of
    its own; started again if the test before left it stopped)."""
    if module_weed.process.poll() is not None:
        module_weed.start()
    return module_weed


def point_settings_at(settings, server: Weed, bucket: str) -> None:
    env = server.env(bucket)
    settings.STORAGE_URL = env["STORAGE_URL"]
    settings.STORAGE_OPTIONS = {"endpoint_url": server.endpoint,
                                "region_name": env["AWS_DEFAULT_REGION"],
                                "access_key": env["AWS_ACCESS_KEY_ID"],
                                "secret_key": env["AWS_SECRET_ACCESS_KEY"]}
    settings.STORAGE_TIMEOUT_SECONDS = 3


@pytest.fixture
def bucket(weed, settings, tmp_path):
    """A new bucket, and the settings pointed at it (a media folder of the test's own)."""
    name = weed.new_bucket()
    settings.MEDIA_ROOT = str(tmp_path / "media")
    point_settings_at(settings, weed, name)
    return name


@pytest.fixture
def own_workers(session_worker, start_worker, transactional_db):
    """A function that starts a worker of this test's own (``name``, environment: its store,
    its MEDIA_ROOT). The session's shared worker (which has neither) is stopped first, so that
    only these take the test's tasks; they are stopped at the end of the test."""
    session_worker["worker"].stop()
    started = []

    def start(name: str, **env):
        started.append(start_worker(name, **env))
        return started[-1]

    yield start
    for worker in started:
        worker.stop()
