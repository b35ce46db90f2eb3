"""Build: the modules an import of engine answers spends its time in are compiled to C by mypyc when possible.

Everything else about the package is in pyproject.toml. The compiled modules behave as their Python source does
(the tests run on the compiled build and compare it with the source; docs/performance.md, *Ingest*).
``CITEAUDIT_COMPILE`` decides: ``0`` builds pure Python, ``1`` requires the compiled build (a failure stops the
install), unset compiles when a C compiler is found and builds pure Python otherwise.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig

from setuptools import setup

COMPILED = [
    "src/citeaudit/ingest/sentences.py",
    "src/citeaudit/ingest/text.py",
    "src/citeaudit/ingest/perplexity.py",
    "src/citeaudit/ingest/assemble.py",
    "src/citeaudit/core/identity.py",
    "src/citeaudit/core/json_walk.py",
]
"""Reading, checking and assembling Sonar answers, the keys of the URLs they cite and the walk that checks every
parsed answer's nesting and numbers: about four fifths of an import's reading time (py-spy; most of the rest is
the JSON parser, C already)."""

MYPYC_OPTIONS = [
    # The type check that compiles: the project's own (``mypy src``) is stricter and runs in `make check`. The
    # build sees only the build's packages, so the other libraries are typed as Any here.
    "--config-file=",
    "--python-version=3.11",
    "--ignore-missing-imports",
    "--follow-imports=silent",
]


def _extensions() -> list[object]:
    wanted = os.environ.get("CITEAUDIT_COMPILE", "")
    if wanted == "0":
        return []
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if wanted != "1" and shutil.which(compiler) is None:
        print(f"citeaudit: no C compiler ({compiler}): building pure Python", file=sys.stderr)
        return []
    from mypyc.build import mypycify

    return list(mypycify([*MYPYC_OPTIONS, *COMPILED], opt_level="3"))


setup(ext_modules=_extensions())
