"""``manage.py vendor_js``: fetch the pinned JavaScript libraries from the npm registry into
``static/tokenizers_app/vendor/`` and record each file's version and hashes in ``VENDOR.json``.

Developers run it to change a version (edit ``LIBRARIES``); nothing runs npm at run time. The
package's ``dist.integrity`` is checked by npm when it packs; the file's own sha384 is what the
pages put in ``integrity=`` (``{% vendor_script %}``).
"""

import base64
import hashlib
import json
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

VENDOR = Path(__file__).resolve().parents[2] / "static" / "tokenizers_app" / "vendor"
# name: (npm package, exact version, file inside the package, file name here)
LIBRARIES = {
    "htmx": ("htmx.org", "2.0.11", "dist/htmx.min.js", "htmx-2.0.11.min.js"),
    "chart.js": ("chart.js", "4.6.1", "dist/chart.umd.min.js", "chart-4.6.1.umd.min.js"),
    "axe-core": ("axe-core", "4.14.1", "axe.min.js", "axe-core-4.14.1.min.js"),
}


def sri(data: bytes) -> str:
    """The Subresource Integrity value of a file: ``sha384-`` and its base64 digest."""
    return "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()


class Command(BaseCommand):
    help = "Fetch the pinned JavaScript libraries with npm and record their versions and hashes."

    def handle(self, *args, **options):
        if shutil.which("npm") is None:
            raise CommandError("npm is not installed: it is needed only to change the vendored "
                               "libraries (apt-get install npm)")
        manifest = {}
        with tempfile.TemporaryDirectory() as work:
            for name, (package, version, inner, target) in LIBRARIES.items():
                spec = f"{package}@{version}"
                integrity = subprocess.run(["npm", "view", spec, "dist.integrity"], check=True,
                                           capture_output=True, text=True).stdout.strip()
                tarball = subprocess.run(["npm", "pack", spec, "--silent"], cwd=work,
                                         check=True, capture_output=True, text=True)
                with tarfile.open(Path(work) / tarball.stdout.strip().splitlines()[-1]) as archive:
                    data = archive.extractfile(f"package/{inner}").read()
                (VENDOR / target).write_bytes(data)
                manifest[name] = {"package": package, "version": version, "npm_integrity":
                                  integrity, "source": inner, "file": target,
                                  "sha384": sri(data), "bytes": len(data)}
                self.stdout.write(f"{spec}: {target} ({len(data)} bytes)")
        (VENDOR / "VENDOR.json").write_text(json.dumps(manifest, indent=2) + "\n")
