"""An S3-compatible bucket (``STORAGE_URL=s3://BUCKET/PREFIX``, read by ``storage_url``),
through boto3: multipart uploads that are completed or aborted, ranged reads, copies and
listings.

Endpoint and keys come from the standard ``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY`` and ``AWS_DEFAULT_REGION``. A missing object is ``FileNotFoundError``;
a store that does not answer, or a missing bucket, is ``StoreUnavailable`` in words.
"""

from __future__ import annotations

import errno
import io
import logging
from contextlib import contextmanager
import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from urllib3.exceptions import HTTPError

from ..errors import StoreUnavailable
from .base import Entry, Store, Writer, clean_name

log = logging.getLogger(__name__)

MISSING = {"NoSuchKey", "404", "NotFound"}
ADVICE = "nothing was written; try again once the store answers"


# what a person reads of what the store was asked to do (the log has the object's name)
_DOING = {"read": "read a stored file", "store": "store a file", "look": "look up a stored file",
          "remove": "remove a stored file", "list": "list the stored files",
          "create": "create its bucket"}


def _doing(what: str) -> str:
    """``_doing("read corpora/ab12.txt") -> "read a stored file"``."""
    return _DOING.get(what.split(" ", 1)[0], "use it")


def _safe_code(code: str) -> str:
    """An S3 error code as a person may read it: a word such as ``AccessDenied``, nothing
    else."""
    return code if code.isalnum() and len(code) <= 40 else "an error"


class S3Store(Store):
    """The bucket and prefix of ``url`` (as ``storage_url`` read them)."""

    def __init__(self, url: str, bucket: str, prefix: str, options: dict, part_bytes: int,
                 timeout_seconds: int):
        self.url, self.bucket, self.prefix, self.part_bytes = url, bucket, prefix, part_bytes
        config = Config(connect_timeout=timeout_seconds, read_timeout=timeout_seconds,
                        retries={"max_attempts": 2, "mode": "standard"},
                        s3={"addressing_style": "path"})  # a bucket as a path: any endpoint
        self.endpoint = options.get("endpoint_url") or "the default AWS endpoint"
        # one client for every thread (boto3's clients are thread-safe): a session and resource
        # per thread would hold memory of its own in a threaded web server (bench/HISTORY.md)
        self.client = boto3.session.Session(
            aws_access_key_id=options.get("access_key"),
            aws_secret_access_key=options.get("secret_key"),
            region_name=options.get("region_name")).client(
                "s3", endpoint_url=options.get("endpoint_url"), config=config)

    def describe(self) -> str:
        return f"the object store {self.url} (at {self.endpoint})"

    def key(self, name: str) -> str:
        return f"{self.prefix}/{clean_name(name)}" if self.prefix else clean_name(name)

    def name_of(self, key: str) -> str:
        return key[len(self.prefix) + 1:] if self.prefix else key

    @contextmanager
    def answering(self, what: str, name: str = "", advice: str = ADVICE):
        """boto's errors as the registry's: missing object, missing bucket, no answer. The
        error's message names nothing of the store (no address, bucket, key or upload id);
        its ``internal`` text and the log say them all, with ``what`` was being done."""
        try:
            yield
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in MISSING and name:
                log.info("no object %r in %s", name, self.describe())
                raise FileNotFoundError(errno.ENOENT, "no such object in the object store",
                                        name) from None
            if code in ("NoSuchBucket", "404", "NotFound"):
                raise self._unavailable(
                    f"the object store does not answer: its bucket is missing (the server's log "
                    f"says which); {advice}",
                    f"the bucket {self.bucket!r} does not exist at {self.endpoint}: create it, "
                    f"or set STORAGE_URL to one that exists; {advice}") from None
            raise self._unavailable(
                f"the object store refused to {_doing(what)} ({_safe_code(code)}); {advice}",
                f"{self.describe()} refused to {what} ({code}: "
                f"{exc.response.get('Error', {}).get('Message', '')}); {advice}") from None
        except (BotoCoreError, HTTPError, ConnectionError) as exc:
            raise self._unavailable(
                f"the object store does not answer: could not {_doing(what)}; {advice}",
                f"{self.describe()} does not answer ({exc}): could not {what}; "
                f"{advice}") from None

    @staticmethod
    def _unavailable(public: str, internal: str) -> StoreUnavailable:
        log.warning("%s", internal)
        return StoreUnavailable(public, internal=internal)

    def check(self) -> None:
        with self.answering("look at its bucket", advice="check AWS_ENDPOINT_URL and the keys, "
                            "and that the store is running"):
            self.client.head_bucket(Bucket=self.bucket)

    def create(self) -> bool:
        try:
            self.check()
            return False
        except StoreUnavailable:
            pass
        region = self.client.meta.region_name
        placed = {} if region in (None, "us-east-1") else {
            "CreateBucketConfiguration": {"LocationConstraint": region}}
        with self.answering(f"create the bucket {self.bucket!r}"):
            self.client.create_bucket(Bucket=self.bucket, **placed)
        return True

    def writer(self, name: str) -> Writer:
        return S3Writer(self, name)

    def open(self, name: str):
        return io.BufferedReader(S3Reader(self, name), buffer_size=1 << 20)

    def read_range(self, name: str, start: int, end: int) -> bytes:
        if end <= start:
            return b""
        with self.answering(f"read {name}", name):
            try:
                body = self.client.get_object(Bucket=self.bucket, Key=self.key(name),
                                              Range=f"bytes={start}-{end - 1}")["Body"]
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") == "InvalidRange":
                    return b""  # start is past the end
                raise
            with body:
                return body.read()

    def size(self, name: str) -> int:
        with self.answering(f"look at {name}", name):
            return self.client.head_object(Bucket=self.bucket, Key=self.key(name))[
                "ContentLength"]

    def exists(self, name: str) -> bool:
        try:
            self.size(name)
        except FileNotFoundError:
            return False
        return True

    def move(self, source: str, target: str) -> None:
        # a copy within the store appears whole at once; objects of over 5 GB cannot be copied
        # so (CORPUS_MAX_BYTES is 2 GB by default)
        with self.answering(f"store {target}", source):
            self.client.copy_object(Bucket=self.bucket, Key=self.key(target),
                                    CopySource={"Bucket": self.bucket, "Key": self.key(source)})
        self.delete(source)

    def delete(self, name: str) -> None:
        with self.answering(f"remove {name}"):
            self.client.delete_object(Bucket=self.bucket, Key=self.key(name))

    def delete_prefix(self, prefix: str) -> None:
        for entry in list(self.list(prefix)):
            self.delete(entry.name)

    def list(self, prefix: str = ""):
        full = f"{self.prefix}/{prefix}" if self.prefix else prefix
        with self.answering("list its objects"):
            pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket,
                                                                           Prefix=full)
            for page in pages:
                for item in page.get("Contents", ()):
                    yield Entry(self.name_of(item["Key"]), item["Size"],
                                item["LastModified"].timestamp())

    def abort_unfinished(self, older_than: float) -> list[str]:
        aborted = []
        with self.answering("list its unfinished uploads"):
            pages = self.client.get_paginator("list_multipart_uploads").paginate(
                Bucket=self.bucket, Prefix=f"{self.prefix}/" if self.prefix else "")
            for page in pages:
                for upload in page.get("Uploads", ()):
                    if upload["Initiated"].timestamp() < older_than:
                        self.client.abort_multipart_upload(Bucket=self.bucket, Key=upload["Key"],
                                                           UploadId=upload["UploadId"])
                        aborted.append(self.name_of(upload["Key"]))
        return aborted


class S3Writer(Writer):
    """A multipart upload: parts of ``part_bytes`` sent as they fill (one part in memory at
    most), completed on ``commit``; an object that fits one part is sent in one PUT. Until
    then no object exists under the name."""

    def __init__(self, store: S3Store, name: str):
        self.store, self.name, self.key = store, name, store.key(name)
        self.buffer, self.parts, self.upload_id = bytearray(), [], None

    def write(self, data: bytes) -> None:
        self.buffer += data
        size = self.store.part_bytes
        while len(self.buffer) >= size:
            part, self.buffer = self.buffer, bytearray(self.buffer[size:])
            del part[size:]
            self._send(part)

    def _send(self, chunk: bytearray) -> None:
        store, client = self.store, self.store.client
        with store.answering(f"store {self.name}"):
            if self.upload_id is None:
                self.upload_id = client.create_multipart_upload(
                    Bucket=store.bucket, Key=self.key)["UploadId"]
            number = len(self.parts) + 1
            answer = client.upload_part(Bucket=store.bucket, Key=self.key, PartNumber=number,
                                        UploadId=self.upload_id, Body=chunk)
        self.parts.append({"PartNumber": number, "ETag": answer["ETag"]})

    def commit(self) -> None:
        store = self.store
        try:
            if self.upload_id is None:
                with store.answering(f"store {self.name}"):
                    store.client.put_object(Bucket=store.bucket, Key=self.key,
                                            Body=self.buffer)
            else:
                if self.buffer:
                    self._send(self.buffer)
                with store.answering(f"store {self.name}"):
                    store.client.complete_multipart_upload(
                        Bucket=store.bucket, Key=self.key, UploadId=self.upload_id,
                        MultipartUpload={"Parts": self.parts})
        except BaseException:
            self.abort()
            raise
        self.buffer, self.upload_id = bytearray(), None

    def abort(self) -> None:
        self.buffer = bytearray()
        if self.upload_id is None:
            return
        upload_id, self.upload_id = self.upload_id, None
        try:
            self.store.client.abort_multipart_upload(Bucket=self.store.bucket, Key=self.key,
                                                     UploadId=upload_id)
        except Exception as exc:  # the sweep aborts it later (abort_unfinished)
            log.warning("upload of %s not aborted (%s): the sweep will", self.name, exc)


class S3Reader(io.RawIOBase):
    """An object read as it arrives (one GET, streamed)."""

    def __init__(self, store: S3Store, name: str):
        super().__init__()
        self.store, self.object_name = store, name
        with store.answering(f"read {name}", name):
            answer = store.client.get_object(Bucket=store.bucket, Key=store.key(name))
        self.body, self.length = answer["Body"], answer["ContentLength"]

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        with self.store.answering(f"read {self.object_name}", self.object_name):
            data = self.body.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self.body.close()
        super().close()
