"""One rooted tree of errors, so callers can catch ``CiteauditError`` and nothing else.

::

    CiteauditError
    ├── InputError                  bad outside input; names file, location and value
    │   ├── MalformedInput          not parseable at all (JSON/YAML syntax)
    │   ├── InvalidValue            parseable, but a value breaks the format's rules
    │   ├── UnknownReference        an id that points nowhere (claim → answer, edge → claim, fact)
    │   ├── DuplicateId             an id given twice, in one file or against the database
    │   └── UnknownFormat           no reader for the input
    ├── ProtocolError               a protocol that cannot be used (e.g. a public suffix as official domain)
    ├── ScopeError                  a scoring scope that is empty or spans several protocols
    ├── IncomparableRuns            two scopes measured differently (fingerprints differ)
    ├── ReviewRefused               a review or adjudication the review policy does not allow; names the rule
    ├── StoreError                  the database cannot be used
    │   ├── SchemaVersionMismatch   the database is newer than this version of citeaudit
    │   └── DatabaseBusy            another process kept the database locked longer than the busy timeout
    ├── MissingExtra                an optional part is not installed; names the pip install line
    ├── EngineFailed                a SQL engine (DuckDB, Spark) refused the tables or the query
    ├── ResolveStopped              a resolver run cannot go on (its text-extraction worker stopped)
    ├── ImportStopped               the process reading an import's payload stopped before the end
    ├── JudgeError                  a judge cannot be used as configured (no model at the path, no endpoint)
    └── SegmentationUnavailable     a model-assisted segmentation cannot run (no endpoint, the endpoint failed)

Every error class citeaudit defines has its line here, wherever the class is defined;
``tests/test_errors.py`` holds the drawing to the classes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

__all__ = [
    "UNNAMED",
    "CiteauditError",
    "DatabaseBusy",
    "DuplicateId",
    "EngineFailed",
    "ImportStopped",
    "IncomparableRuns",
    "InputError",
    "InvalidValue",
    "JudgeError",
    "MalformedInput",
    "MissingExtra",
    "ProtocolError",
    "ResolveStopped",
    "ReviewRefused",
    "SchemaVersionMismatch",
    "ScopeError",
    "SegmentationUnavailable",
    "StoreError",
    "UnknownFormat",
    "UnknownReference",
    "naming",
]


class CiteauditError(Exception):
    """Root of every error citeaudit raises on purpose."""


class InputError(CiteauditError):
    """Outside input that citeaudit refuses.

    The message always carries where (file and JSON path or line) and what (the offending value).
    """

    def __init__(self, source: str, location: str, message: str) -> None:
        self.source = source
        self.location = location
        self.message = message
        where = f"{source}: {location}" if location else source
        super().__init__(f"{where}: {message}")

    def __reduce__(self) -> tuple[type[InputError], tuple[str, str, str]]:
        # made again from its three parts (its one-line message is made from them): it travels whole from the
        # process that reads an import to the one that writes it
        return type(self), (self.source, self.location, self.message)

    def named(self, source: str) -> InputError:
        """The same error, of the same class, naming the input ``source``."""
        return type(self)(source, self.location, self.message)


UNNAMED = ""
"""The input an error names when it is raised below the function that knows the input's name: the checks of a
document speak in locations, and :func:`naming` gives their errors the file's name on the way out."""


@contextmanager
def naming(source: str) -> Iterator[None]:
    """Give ``source`` to every input error raised inside that names no input (raised with :data:`UNNAMED`)."""
    try:
        yield
    except InputError as exc:
        if exc.source != UNNAMED:
            raise
        raise exc.named(source) from None


class MalformedInput(InputError):
    """The input is not valid JSON / YAML at all."""


class InvalidValue(InputError):
    """A value breaks a rule of the input format (wrong type, unknown label, bad span...)."""


class UnknownReference(InputError):
    """An id refers to something that does not exist (an edge's claim, a claim's answer, a fact)."""


class DuplicateId(InputError):
    """An id that must be unique appears twice."""


class UnknownFormat(InputError):
    """No reader recognises the input; the message lists the readers that exist."""


class ProtocolError(CiteauditError):
    """A protocol that is well-formed but cannot be used as it is."""


class ScopeError(CiteauditError):
    """A scoring scope that cannot be scored as asked (empty, or spanning several protocols)."""


class IncomparableRuns(CiteauditError):
    """Two scopes whose protocol fingerprints differ: comparing them would compare different measurements.

    ``differences`` maps each differing fingerprint component to its two component hashes.
    """

    def __init__(self, differences: Mapping[str, tuple[str, str]]) -> None:
        self.differences = dict(differences)
        names = ", ".join(sorted(self.differences))
        super().__init__(
            f"refusing to compare: the protocol fingerprints differ in {len(self.differences)} "
            f"component(s): {names}. Only scopes measured the same way can be compared."
        )


class ReviewRefused(CiteauditError):
    """A review or adjudication the review policy does not allow (the message says which rule); nothing of it
    was written. The same rules hold whatever door the judgement came through."""


class StoreError(CiteauditError):
    """The database cannot be opened or used."""


class SchemaVersionMismatch(StoreError):
    """The database was written by a newer citeaudit; refusing to touch it."""


class DatabaseBusy(StoreError):
    """Another process kept the database locked for writing longer than this one would wait; nothing was
    written."""


class MissingExtra(CiteauditError):
    """An optional part of citeaudit is used but its extra is not installed; the message gives the install line."""

    def __init__(self, extra: str, purpose: str | None = None) -> None:
        self.extra = extra
        if purpose is None:  # a complete message
            super().__init__(extra)
        else:
            super().__init__(f"{purpose} needs the optional dependencies: pip install 'citeaudit[{extra}]'")


class EngineFailed(CiteauditError):
    """A SQL engine refused the tables or the query (a missing table, unreadable files); the message is the
    engine's first line."""

    def __init__(self, engine: str, cause: BaseException) -> None:
        self.engine = engine
        first = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
        super().__init__(f"{engine} cannot score these tables: {first}")


class ResolveStopped(CiteauditError):
    """A resolver run could not go on (its text-extraction worker process stopped); what it recorded is kept."""


class ImportStopped(CiteauditError):
    """An import could not go on: the process reading its payload stopped before the end (killed from outside,
    out of memory); nothing of the import was written."""


class JudgeError(CiteauditError):
    """A judge that cannot run as configured (a model path without a model, an endpoint not set)."""


class SegmentationUnavailable(CiteauditError):
    """A model-assisted segmentation that cannot run as configured (no endpoint or model, the endpoint failed)."""
