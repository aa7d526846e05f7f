"""Static files with DEBUG off: whitenoise's hashed, compressed, long-cached copies.

The vendored JavaScript files are kept byte for byte as published (their integrity hashes are
recorded in ``VENDOR.json``), so their ``sourceMappingURL`` comments name maps that are not
shipped; rewriting JavaScript references is therefore left out, or ``collectstatic`` would
stop at the first missing map. CSS references are still rewritten to the hashed names.
"""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    patterns = tuple(pattern for pattern in CompressedManifestStaticFilesStorage.patterns
                     if pattern[0] == "*.css")
