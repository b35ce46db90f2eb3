"""Readers that turn files into audits: one module per format, registered in :data:`READERS`.

Document readers return a whole audit; answer readers return engine answers that
:func:`~citeaudit.ingest.assemble.assemble` attaches to a protocol question, a run and a platform.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from citeaudit.errors import InputError, InvalidValue, UnknownFormat
from citeaudit.ingest import anthropic, audit_json, expertqa, gemini, jsonl, markdown, openai, perplexity, serpapi
from citeaudit.ingest.assemble import CHUNK, Attachment, assemble_chunks
from citeaudit.ingest.base import Reader, ReaderKind
from citeaudit.limits import shown
from citeaudit.model import Audit
from citeaudit.store import ImportReport, Store

__all__ = [
    "READERS",
    "Attachment",
    "PreparedImport",
    "Reader",
    "detect_reader",
    "ingest_file",
    "ingest_files",
    "needs_attachment",
    "read_file",
    "read_files",
    "store_prepared",
]

READERS: dict[str, Reader] = {
    reader.name: reader
    for reader in (
        # Engine shapes first: the generic formats would also accept some of their payloads.
        audit_json.READER,
        expertqa.READER,
        openai.RESPONSES_READER,
        openai.CHAT_READER,
        perplexity.READER,
        gemini.READER,
        anthropic.READER,
        serpapi.READER,
        jsonl.READER,
        markdown.READER,
    )
}
"""Every reader by format name, in detection order."""

_HEAD_BYTES = 8192
_DECLARED_FORMAT = re.compile(rb'"format"\s*:\s*"([^"]*)"')


def detect_reader(data: bytes, source: str, fmt: str | Reader | None = None) -> Reader:
    """The reader named ``fmt`` (or given as ``fmt``), or the one that recognises the content."""
    known = ", ".join(sorted(READERS))
    if isinstance(fmt, Reader):
        return fmt
    if fmt is not None:
        try:
            return READERS[fmt]
        except KeyError:
            raise UnknownFormat(source, "--format", f"no reader for {fmt!r}; known formats: {known}") from None
    head = data[:_HEAD_BYTES]
    for reader in READERS.values():
        if reader.can_read(head):
            return reader
    declared = _DECLARED_FORMAT.search(head)
    if declared:
        raise UnknownFormat(
            source, "format", f"no reader for format {declared.group(1).decode(errors='replace')!r}; known: {known}"
        )
    raise UnknownFormat(source, "", f"no reader recognises this content; known formats: {known} (or pass --format)")


@dataclass(frozen=True, slots=True)
class PreparedImport:
    """A file read and checked, ready to be written in one transaction."""

    source: str
    """File name."""
    data: bytes
    """The raw payload, stored verbatim."""
    reader: Reader
    """The reader used."""
    audit: Audit
    """What it contains, canonical."""


def _read_bytes(path: str | Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(str(path), "", f"cannot read: {exc.strerror}") from None


def read_file(
    path: str | Path, fmt: str | Reader | None = None, attachment: Attachment | None = None
) -> PreparedImport:
    """Parse and check a file; nothing is written.

    Answer formats need an ``attachment`` (the protocol, and optionally run, platform and question).
    """
    source = str(path)
    data = _read_bytes(path)
    return _prepare(source, data, detect_reader(data, source, fmt), attachment)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while hundreds of thousands of small acyclic records are built.

    Without this, every generation-0 collection walks the growing set of answers again; reading and assembling
    a large payload takes about twice as long. Reference counting still frees memory as usual.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _prepare(source: str, data: bytes, reader: Reader, attachment: Attachment | None) -> PreparedImport:
    with _collector_paused():
        return _prepare_now(source, data, reader, attachment)


def _prepare_now(source: str, data: bytes, reader: Reader, attachment: Attachment | None) -> PreparedImport:
    (audit,) = _audits(source, data, reader, attachment, size=None)
    return PreparedImport(source, data, reader, audit)


def _audits(
    source: str, data: bytes, reader: Reader, attachment: Attachment | None, *, size: int | None = CHUNK
) -> Iterator[Audit]:
    """What the file holds, as audits of at most ``size`` answers each (a whole audit for document readers)."""
    if reader.read_audit is not None:
        yield reader.read_audit(data, source)
        return
    assert reader.read_answers is not None
    if attachment is None:
        raise InputError(
            source,
            "",
            f"{reader.name} answers need a protocol to attach to: pass --questions PROTOCOL.yaml "
            "or import a protocol into the database first",
        )
    parsed = reader.read_answers(data, source)
    sha = hashlib.sha256(data).hexdigest()
    default_platform = None if reader.generic else reader.name.split("-")[0]
    yield from assemble_chunks(parsed, attachment, source, sha, default_platform, size=size)


def read_files(
    paths: Sequence[str | Path], fmt: str | Reader | None = None, attachment: Attachment | None = None
) -> list[PreparedImport]:
    """Read and check several files; nothing is written. ExpertQA files given together form one dataset
    (one import whose payload is their lines in the given order)."""
    return [_prepare(name, _payload(reader, files), reader, attachment) for name, reader, files in _imports(paths, fmt)]


def _imports(paths: Sequence[str | Path], fmt: str | Reader | None) -> list[tuple[str, Reader, tuple[str, ...]]]:
    """``(name, reader, files)`` of each import the files make, their formats recognised from their first bytes:
    one a file, except that ExpertQA files given together form one dataset, first, named after all of them."""
    plan: list[tuple[str, Reader, tuple[str, ...]]] = []
    expertqa_files: list[str] = []
    for path in paths:
        name = str(path)
        reader = detect_reader(_read_head(path), name, fmt)
        if reader is expertqa.READER:
            expertqa_files.append(name)
        else:
            plan.append((name, reader, (name,)))
    if expertqa_files:
        plan.insert(0, (" + ".join(expertqa_files), expertqa.READER, tuple(expertqa_files)))
    return plan


def _payload(reader: Reader, files: Sequence[str]) -> bytes:
    """The bytes one import stores: its file's, or the ExpertQA files' lines in order."""
    if reader is expertqa.READER:
        return expertqa.combine([_read_bytes(part) for part in files])
    (file,) = files
    return _read_bytes(file)


def ingest_file(
    store: Store, path: str | Path, fmt: str | None = None, attachment: Attachment | None = None
) -> ImportReport:
    """Read, check and store one file in one transaction, a chunk at a time; the same bytes twice is a no-op."""
    ((_, _, report),) = ingest_files(store, [path], fmt, attachment)
    return report


def ingest_files(
    store: Store,
    paths: Sequence[str | Path],
    fmt: str | Reader | None = None,
    attachment: Attachment | None = None,
    *,
    progress: Callable[[str, int], None] | None = None,
    chunk: int = CHUNK,
) -> list[tuple[str, Reader, ImportReport]]:
    """Import files in one transaction, each as an import of its own: ``(file, reader, report)`` per file.

    Engine payloads are read, checked and written a chunk of answers at a time, so memory stays bounded
    whatever the file's size; a problem in any file, found at any point, leaves the database as it was. Every
    file's format is recognised before anything is read in full. ExpertQA files given together form one dataset
    (as in :func:`read_files`). ``progress(file, n)`` is told each time ``n`` more answer records are stored;
    ``chunk`` is how many answer records are written at a time.
    """
    plan = _imports(paths, fmt)
    results: list[tuple[str, Reader, ImportReport]] = []
    name = ""
    try:
        with store.transaction(), _collector_paused():
            for name, reader, files in plan:
                data = _payload(reader, files)
                told = None if progress is None else functools.partial(progress, name)
                report = store.import_chunks(
                    _audits(name, data, reader, attachment, size=chunk),
                    data,
                    origin=name,
                    fmt=reader.name,
                    media_type=reader.media_type,
                    progress=told,
                )
                results.append((name, reader, report))
    except UnicodeEncodeError as exc:
        raise _unstorable(name, exc) from None
    return results


def _unstorable(source: str, error: UnicodeEncodeError) -> InvalidValue:
    """The last guard before the store: a string the readers let through (a command-line value, say) that holds
    a lone surrogate, which no UTF-8 text can; the transaction it broke has been rolled back."""
    text = error.object if isinstance(error.object, str) else ""
    return InvalidValue(
        source,
        "",
        f"lone surrogate {text[error.start : error.start + 1]!r} in {shown(text)}: not a character UTF-8 can store",
    )


def _read_head(path: str | Path) -> bytes:
    try:
        with Path(path).open("rb") as handle:
            return handle.read(_HEAD_BYTES)
    except OSError as exc:
        raise InputError(str(path), "", f"cannot read: {exc.strerror}") from None


def store_prepared(store: Store, prepared: PreparedImport) -> ImportReport:
    """Write a prepared import in one transaction."""
    try:
        with _collector_paused():
            return store.import_audit(
                prepared.audit,
                prepared.data,
                origin=prepared.source,
                fmt=prepared.reader.name,
                media_type=prepared.reader.media_type,
            )
    except UnicodeEncodeError as exc:
        raise _unstorable(prepared.source, exc) from None


def needs_attachment(path: str | Path, fmt: str | Reader | None = None) -> bool:
    """Whether the file's format (recognised from its first bytes) is an answer format, so it needs a protocol
    to attach to."""
    return detect_reader(_read_head(path), str(path), fmt).kind is ReaderKind.ANSWERS
