"""The core's compiled loops: optional C extensions built from the ``.pyx`` twins of
``training_loop.py``, ``encoding_loop.py`` and ``token_table.py``'s answer writer (see
``tokenizers_app/bpe/compiled.py``).

Without a C compiler or the Python headers the build of each extension fails, one warning line
names it (``optional=True``, ``BuildOptional``), and the install goes on with the pure-Python core. Everything else about the
package is in pyproject.toml.
"""

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

COMPILED = ["training_loop_compiled", "encoding_loop_compiled", "token_table_compiled"]


class BuildOptional(build_ext):
    """Build the optional extensions, or print one warning line and go on without them (the
    compiler may fail in ways distutils' ``optional`` does not catch, such as ``CC=false``). The
    core uses both or neither, so after one fails the others are not tried."""

    failed = False

    def build_extension(self, ext):
        if self.failed and ext.optional:
            return
        try:
            super().build_extension(ext)
        except Exception as exc:  # noqa: BLE001 - any failure leaves the pure-Python loops
            if not ext.optional:
                raise
            BuildOptional.failed = True
            print(f"WARNING: the compiled BPE loops were not built ({type(exc).__name__}: they "
                  f"need a C compiler and the Python headers); the pure-Python core will run",
                  file=sys.stderr)


def extensions():
    from Cython.Build import cythonize

    modules = [Extension(f"tokenizers_app.bpe.{name}", [f"tokenizers_app/bpe/{name}.pyx"],
                         optional=True, extra_compile_args=["-O3"])
               for name in COMPILED]
    built = cythonize(modules, language_level=3, quiet=True)
    for module in built:
        module.optional = True  # cythonize makes new extensions, without this flag
    return built


setup(ext_modules=extensions(), cmdclass={"build_ext": BuildOptional})
