"""The core's compiled loops: optional C extensions built from the ``.pyx`` twins of
``training_loop.py`` and ``encoding_loop.py`` (see ``tokenizers_app/bpe/compiled.py``).

Without a C compiler or the Python headers the build of each extension fails, setuptools prints a
warning line for it (``optional=True``), and the install goes on with the pure-Python core. Everything else about the
package is in pyproject.toml.
"""

from setuptools import Extension, setup

COMPILED = ["training_loop_compiled", "encoding_loop_compiled"]


def extensions():
    from Cython.Build import cythonize

    modules = [Extension(f"tokenizers_app.bpe.{name}", [f"tokenizers_app/bpe/{name}.pyx"],
                         optional=True, extra_compile_args=["-O3"])
               for name in COMPILED]
    return cythonize(modules, language_level=3, quiet=True)


setup(ext_modules=extensions())
