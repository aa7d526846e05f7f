"""The admin, for staff: ``versions`` (publish, deprecate and annotate versions, move aliases;
read-only views of corpora, runs and evaluations) and ``api_keys`` (create and revoke API keys).
Importing the package registers both with the admin site."""

from . import api_keys, versions

__all__ = ["api_keys", "versions"]
