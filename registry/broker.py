"""The broker kept in files (the embedded default): kombu's filesystem transport, with each
message published whole.

kombu writes a message straight into the folder the workers read, so a worker that lists the
folder between the file's creation and the end of its write takes an empty or cut message and
dies on it (``JSONDecodeError``, "Unrecoverable error"). Here a message is written under a name
no reader takes (it has no ``.<queue>.msg`` ending) and then renamed into place in one step.
A message that cannot be read all the same (a file damaged by hand, say) is logged and skipped,
never the end of the worker.
"""

import logging
import os
import tempfile
import time
import uuid
from pathlib import Path

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

log = logging.getLogger(__name__)


class Channel(filesystem.Channel):
    def _get(self, queue):
        while True:  # kombu has removed a message it could not decode: on to the next
            try:
                return super()._get(queue)
            except ValueError as error:
                log.error("a message of queue %s could not be read and was dropped: %s",
                          queue, error)

    def _put(self, queue, payload, **kwargs):
        # the name kombu's readers look for, ordered by time
        name = f"{int(round(time.monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        handle, temporary = tempfile.mkstemp(dir=self.data_folder_out, prefix=".publishing-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(str_to_bytes(dumps(payload)))
            os.replace(temporary, os.path.join(self.data_folder_out, name))
        except OSError as error:
            Path(temporary).unlink(missing_ok=True)
            raise ChannelError(f"cannot add a message to {self.data_folder_out!r}") from error


class Transport(filesystem.Transport):
    Channel = Channel
