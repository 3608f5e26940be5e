"""privkit's optional compiled accelerators; everything else is declared in pyproject.toml.

Two Cython modules in ``algorithms/_accelerators/`` speed up the SVDD solver (``_hull.pyx``,
Lawson-Hanson NNLS on scipy's BLAS) and the random Fourier features (``_rff.pyx``). Each has a
numpy path with the same results (``_hull_numpy.py``, ``_rff_numpy.py``) that privkit
uses when the compiled module is absent, so the build is optional: when no C compiler
works (``CC=false``, none installed) or an extension fails to compile, the build says so
in one line and installs privkit without it, as PyYAML and simplejson do.
"""

from __future__ import annotations

import sys
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CompileError, LinkError

#: the flags of GCC and clang: contraction into fused multiply-adds is off so that every
#: operation rounds once, as in the numpy paths (bit for bit for the random features)
_UNIX_ARGS = ["-O3", "-ffp-contract=off"]
_MSVC_ARGS = ["/O2", "/fp:precise"]


class OptionalBuildExt(build_ext):
    """``build_ext`` that skips, with a one-line message, the extensions that cannot be
    built (no compiler, a compiler error, or the GNU vector extensions of ``_rff`` under
    MSVC), instead of failing the install; the skipped ones are dropped from the build's
    outputs."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as err:  # no compiler at all: the platform check fails early
            print(f"privkit: building no compiled accelerator ({_one_line(err)}); privkit "
                  "uses its numpy paths, with the same results", file=sys.stderr)
            self.extensions = []

    def build_extensions(self) -> None:
        self.check_extensions_list(self.extensions)
        self.extensions = [ext for ext in self.extensions if self._built(ext)]

    def _built(self, ext: Any) -> bool:
        msvc = self.compiler.compiler_type == "msvc"
        ext.extra_compile_args = list(_MSVC_ARGS if msvc else _UNIX_ARGS)
        if msvc and ext.name.endswith("._rff"):
            _skip(ext, "it needs GCC or clang vector extensions")
            return False
        try:
            self.build_extension(ext)
        except (CompileError, LinkError) as err:
            command = getattr(self.compiler, "compiler_so", None) or ["the compiler"]
            _skip(ext, f"{type(err).__name__} from {command[0]!r}")
            return False
        except Exception as err:  # e.g. a compiler that is not there (OSError)
            _skip(ext, _one_line(err))
            return False
        return True


def _skip(ext: Any, why: str) -> None:
    print(f"privkit: not building the optional accelerator {ext.name} ({why}); privkit "
          "uses its numpy path, with the same results", file=sys.stderr)


def _one_line(err: BaseException) -> str:
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[-1]}" if lines else type(err).__name__


def _extensions() -> list[Extension]:
    from Cython.Build import cythonize  # a build requirement (pyproject.toml)

    exts = [
        Extension("privkit.algorithms._accelerators._hull",
                  ["algorithms/_accelerators/_hull.pyx"]),
        Extension("privkit.algorithms._accelerators._rff", ["algorithms/_accelerators/_rff.pyx"],
                  depends=["algorithms/_accelerators/_rff_simd.h",
                           "algorithms/_accelerators/_simd.h"]),
    ]
    out: list[Extension] = cythonize(exts, language_level=3, quiet=True)
    return out


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
