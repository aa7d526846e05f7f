"""The admin, for staff: ``versions`` (publish, deprecate and annotate versions, move aliases;
read-only views of runs and evaluations), ``corpora`` (their facts; the evaluation flag) and
``api_keys`` (create and revoke API keys). Importing the package registers them with the admin
site."""

from . import api_keys, corpora, versions

__all__ = ["api_keys", "corpora", "versions"]
