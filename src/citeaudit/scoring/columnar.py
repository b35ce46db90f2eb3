"""Scoring from columns: Arrow tables, or a folder of Parquet files, straight into the vectorized core.

The object API (:func:`citeaudit.score` on an :class:`~citeaudit.core.model.Audit`) builds a Python object for every
answer, claim, edge and citation location: the path for small data and for checking one audit by hand. At
millions of citation locations, hand the same audit over as columns instead; the protocol (questions, required
facts, official domains) stays an object, since it is small. The layout (``docs/columnar.md``):

``answers``
    ``question`` (string: a question id of the protocol); optional text columns ``platform``, ``run``, ``model``,
    ``locale`` (null: the question's locale), ``sample``.
``claims``
    ``answer`` (integer: a row of ``answers``); optional ``fact`` (string: a required fact id, null when the claim
    maps to none) and ``severity`` (string, null: the fact's).
``locations``
    One row per citation location: ``claim`` and ``source`` (integers: rows of ``claims`` and ``sources``) and
    ``label`` (string: a final label, ``pending`` or ``disputed``; null is pending). Locations of one (claim,
    source) pair are one edge and must carry one label.
``sources``
    ``host`` (string, null when the source has none) and optional ``path`` (string, ``/`` when absent): official
    matching reads these, once per host.
``citations`` (optional)
    The answers' cited citations: ``answer`` and ``source`` (rows).

Every reference is checked (range, nulls, known ids and labels) before scoring; a bad value is refused with its
table, row and column. Arrow columns become numpy arrays without a copy where Arrow allows it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from citeaudit.core.convention_sql import PARTITIONS, partition_value
from citeaudit.core.errors import InvalidValue, MissingExtra, UnknownReference
from citeaudit.core.identity import OfficialMatcher
from citeaudit.core.memory import memory_kept
from citeaudit.core.model import Protocol
from citeaudit.core.protocol import fingerprint
from citeaudit.core.results import ScoreResult
from citeaudit.core.scoring import (
    DISPUTED_CODE,
    EDGE_KEY_LIMIT,
    LABELS,
    NO_SEVERITY,
    PACK_BLOCK,
    PENDING_CODE,
    SEVERITIES,
    IntervalSettings,
    ScoringColumns,
    collapse_locations,
    collapse_packed,
    pack_edge_keys,
    score_columns,
)

__all__ = ["TABLES", "columns_from_arrow", "read_export_tables", "read_parquet_tables", "score_arrow", "score_parquet"]

TABLES = ("answers", "claims", "locations", "sources", "citations")
"""The tables of the columnar layout (``citations`` may be absent)."""

_DIMENSION_COLUMNS = ("platform", "run", "model", "locale", "sample")
_LAYOUT_COLUMNS = {
    "answers": ("question", *_DIMENSION_COLUMNS),
    "claims": ("answer", "fact", "severity"),
    "locations": ("claim", "source", "label"),
    "sources": ("host", "path"),
    "citations": ("answer", "source"),
}
"""Every column of each table of the layout that scoring reads (module docstring); others are never read."""
_LABEL_CODES = {**{str(label): code for code, label in enumerate(LABELS)}, "pending": PENDING_CODE}
_LABEL_CODES["disputed"] = DISPUTED_CODE
_SEVERITY_CODES = {str(s): code for code, s in enumerate(SEVERITIES)}

Int64Array = npt.NDArray[np.int64]


def _pyarrow() -> tuple[Any, Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtra("parquet", "Scoring Arrow tables or Parquet files") from None
    return pa, pc, pq


class _Tables:
    """The tables with where they came from, for messages that name the offending row."""

    def __init__(self, tables: Mapping[str, Any], where: str) -> None:
        self.tables = tables
        self.where = where

    def table(self, name: str) -> Any:
        if name not in self.tables:
            raise InvalidValue(self.where, name, f"missing table {name!r}; the layout has {', '.join(TABLES)}")
        return self.tables[name]

    def has(self, table: str, column: str) -> bool:
        return column in self.table(table).column_names

    def column(self, table: str, column: str) -> Any:
        if not self.has(table, column):
            names = ", ".join(self.table(table).column_names) or "none"
            raise InvalidValue(self.where, table, f"missing column {column!r} (columns: {names})")
        return self.table(table).column(column)

    def refuse(self, table: str, column: str, row: int, message: str) -> InvalidValue:
        return InvalidValue(self.where, f"{table}[{row}].{column}", message)

    def rows(self, table: str, column: str, n_target: int, target: str) -> Int64Array:
        """An integer column of row references into ``target`` (``n_target`` rows), checked."""
        _, pc, _ = _pyarrow()
        values = self.column(table, column)
        if values.null_count:
            row = int(pc.index(pc.is_null(values), True).as_py())
            raise self.refuse(table, column, row, f"null; every row refers to a row of {target}")
        chunks = [np.asarray(chunk, dtype=np.int64) for chunk in values.chunks]
        array = chunks[0] if len(chunks) == 1 else np.concatenate(chunks) if chunks else np.zeros(0, np.int64)
        if len(array) and (int(array.min()) < 0 or int(array.max()) >= n_target):
            row = int(np.flatnonzero((array < 0) | (array >= n_target))[0])
            raise UnknownReference(
                self.where,
                f"{table}[{row}].{column}",
                f"{int(array[row])!r} is not a row of {target} ({n_target} rows)",
            )
        return array

    def codes(self, table: str, column: str, known: Mapping[str, int], null: int | None, what: str) -> Int64Array:
        """A text column as integer codes of ``known`` (null as ``null``, refused when that is None).

        Read a chunk at a time: a table read from Parquet has a chunk, with its own dictionary, per row group, and
        joining them first would unify the dictionaries and copy every index."""
        pa, _, _ = _pyarrow()
        values = self.column(table, column)
        chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
        parts, offset = [], 0
        for chunk in chunks:
            parts.append(self._chunk_codes(chunk, table, column, known, null, what, offset))
            offset += len(chunk)
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def _chunk_codes(
        self, chunk: Any, table: str, column: str, known: Mapping[str, int], null: int | None, what: str, offset: int
    ) -> Int64Array:
        pa, pc, _ = _pyarrow()
        encoded = chunk if pa.types.is_dictionary(chunk.type) else chunk.dictionary_encode()
        dictionary = [str(v) for v in encoded.dictionary.to_pylist()]
        lookup = np.zeros(len(dictionary) + 1, dtype=np.int64)
        for i, value in enumerate(dictionary):
            if value in known:
                lookup[i] = known[value]
                continue
            row = int(pc.index(encoded.indices, i).as_py())
            if row >= 0:  # a dictionary may hold values no row uses
                raise self.refuse(table, column, offset + row, f"{value!r} is not {what} ({', '.join(known)})")
        indices = encoded.indices
        if encoded.null_count:
            if null is None:
                row = int(pc.index(pc.is_null(encoded), True).as_py())
                raise self.refuse(table, column, offset + row, f"null; expected {what}")
            lookup[len(dictionary)] = null
            indices = indices.fill_null(len(dictionary))
        found: Int64Array = lookup[np.asarray(indices)]  # Arrow's own integers index: no widened copy
        return found

    def packed_locations(self, n_claims: int, n_sources: int) -> Int64Array | None:
        """The locations' packed edge keys (:func:`~citeaudit.core.scoring.collapse_packed`), made a block of rows
        at a time straight from the Arrow buffers, batch by batch: the claim, source and code columns are never
        built whole, and locations streamed from a Parquet file (:class:`_StreamedTable`) are never read whole.
        None when a value is to be refused (a null or out-of-range reference, a label that is not one): the
        column-wise checks then name the first offending row, as they always have."""
        if n_sources <= 0 or n_claims * n_sources >= EDGE_KEY_LIMIT:
            return None
        names = ["claim", "source", "label"] if self.has("locations", "label") else ["claim", "source"]
        table = self.table("locations")
        batches = table.batches(names) if isinstance(table, _StreamedTable) else table.select(names).to_batches()
        packed = np.empty(table.num_rows, dtype=np.int64)
        codes = np.empty(min(len(packed), PACK_BLOCK), dtype=np.int64)
        offset = 0
        for batch in batches:
            if batch.column(0).null_count or batch.column(1).null_count or offset + batch.num_rows > len(packed):
                return None
            claim = np.asarray(batch.column(0), dtype=np.int64)
            source = np.asarray(batch.column(1), dtype=np.int64)
            label = _label_lookup(batch.column(2)) if len(names) == 3 else None
            if len(names) == 3 and label is None:
                return None
            for start in range(0, batch.num_rows, PACK_BLOCK):
                end = min(start + PACK_BLOCK, batch.num_rows)
                c, s = claim[start:end], source[start:end]
                if int(c.min()) < 0 or int(c.max()) >= n_claims or int(s.min()) < 0 or int(s.max()) >= n_sources:
                    return None
                code: Int64Array | int = PENDING_CODE
                if label is not None:
                    lookup, indices = label
                    code = np.take(lookup, indices[start:end], out=codes[: end - start], mode="clip")
                pack_edge_keys(packed[offset + start : offset + end], c, s, code, n_sources)
            offset += batch.num_rows
        return packed if offset == len(packed) else None

    def texts(self, table: str, column: str) -> list[str | None]:
        """A text column as Python strings, each distinct value converted once (through its dictionary)."""
        pa, _, _ = _pyarrow()
        values = self.column(table, column)
        encoded = values.dictionary_encode() if not pa.types.is_dictionary(values.type) else values
        encoded = encoded.combine_chunks() if isinstance(encoded, pa.ChunkedArray) else encoded
        names: list[str | None] = [str(v) for v in encoded.dictionary.to_pylist()]
        names.append(None)
        indices = encoded.indices.fill_null(len(names) - 1) if encoded.null_count else encoded.indices
        return [names[i] for i in np.asarray(indices).tolist()]


def _label_lookup(chunk: Any) -> tuple[Int64Array, npt.NDArray[Any]] | None:
    """A label chunk's codes as a lookup table over its dictionary indices (null: pending), with the indices; None
    when the dictionary holds a value that is not a label (the column-wise check decides whether a row uses it)."""
    pa, _, _ = _pyarrow()
    encoded = chunk if pa.types.is_dictionary(chunk.type) else chunk.dictionary_encode()
    dictionary = [str(v) for v in encoded.dictionary.to_pylist()]
    if any(value not in _LABEL_CODES for value in dictionary):
        return None
    lookup = np.array([*(_LABEL_CODES[value] for value in dictionary), PENDING_CODE], dtype=np.int64)
    indices = encoded.indices.fill_null(len(dictionary)) if encoded.null_count else encoded.indices
    return lookup, np.asarray(indices)


def columns_from_arrow(
    protocol: Protocol, tables: Mapping[str, Any], *, where: str = "<arrow tables>"
) -> ScoringColumns:
    """The scoring columns of an audit given as Arrow tables in the columnar layout (module docstring),
    measured under ``protocol``. ``where`` names the tables in messages."""
    t = _Tables(tables, where)
    questions = protocol.questions
    facts = [f for q in questions for f in q.required_facts]
    fact_index = {f.id: i for i, f in enumerate(facts)}
    question_index = {q.id: i for i, q in enumerate(questions)}

    answer_question = t.codes("answers", "question", question_index, None, "a question id of the protocol")
    n_answers = len(answer_question)
    question_ids = [q.id for q in questions]
    dims: dict[str, Sequence[str | None]] = {"question": [question_ids[q] for q in answer_question.tolist()]}
    for name in _DIMENSION_COLUMNS:
        if t.has("answers", name):
            dims[name] = t.texts("answers", name)
        else:
            dims[name] = [None] * n_answers
    if not t.has("answers", "locale") or t.column("answers", "locale").null_count:
        locales = [q.locale for q in questions]
        given = dims["locale"]
        dims["locale"] = [
            value if value is not None else locales[q] for value, q in zip(given, answer_question.tolist(), strict=True)
        ]

    claim_answer = t.rows("claims", "answer", n_answers, "answers")
    n_claims = len(claim_answer)
    claim_fact = (
        t.codes("claims", "fact", fact_index, -1, "a required fact id of the protocol")
        if t.has("claims", "fact")
        else np.full(n_claims, -1, dtype=np.int64)
    )
    fact_severity = np.array(
        [NO_SEVERITY if f.severity is None else _SEVERITY_CODES[str(f.severity)] for f in facts], dtype=np.int64
    )
    # A claim's own severity, else its fact's, else none (as the store and the object path decide).
    inherited = np.where(claim_fact >= 0, fact_severity[np.maximum(claim_fact, 0)] if len(facts) else 0, NO_SEVERITY)
    if t.has("claims", "severity"):
        own = t.codes("claims", "severity", _SEVERITY_CODES, -1, "a severity")
        claim_severity = np.where(own >= 0, own, inherited)
    else:
        claim_severity = inherited

    n_sources = t.table("sources").num_rows
    source_official = _official(t, protocol)
    try:
        packed = t.packed_locations(n_claims, n_sources)
        if packed is not None:
            edge_claim, edge_source, edge_code, edge_locations = collapse_packed(packed, n_sources)
        else:
            edge_claim, edge_source, edge_code, edge_locations = _checked_locations(t, n_claims, n_sources)
    except ValueError as exc:
        raise InvalidValue(where, "locations.label", str(exc)) from None
    if "citations" in tables:
        citation_answer = t.rows("citations", "answer", n_answers, "answers")
        citation_source = t.rows("citations", "source", n_sources, "sources")
    else:
        citation_answer = citation_source = np.zeros(0, dtype=np.int64)
    weights = dict(protocol.weights) if protocol.weights is not None else None
    question_facts, start = [], 0
    for question in questions:
        question_facts.append(np.arange(start, start + len(question.required_facts), dtype=np.int64))
        start += len(question.required_facts)
    return ScoringColumns(
        answer_dims=dims,
        answer_question=answer_question,
        question_facts=question_facts,
        fact_severity=fact_severity,
        claim_answer=claim_answer,
        claim_fact=claim_fact,
        claim_severity=claim_severity.astype(np.int64),
        edge_claim=edge_claim,
        edge_source=edge_source,
        edge_code=edge_code,
        edge_locations=edge_locations,
        source_official=source_official,
        citation_answer=citation_answer,
        citation_source=citation_source,
        fact_weight=None
        if weights is None
        else np.array([weights[f.severity] if f.severity else 0.0 for f in facts], dtype=np.float64),
    )


def _checked_locations(
    t: _Tables, n_claims: int, n_sources: int
) -> tuple[Int64Array, Int64Array, Int64Array, Int64Array]:
    """The edges from the location columns built whole, each checked in turn: refuses the first bad row."""
    loc_claim = t.rows("locations", "claim", n_claims, "claims")
    loc_source = t.rows("locations", "source", n_sources, "sources")
    loc_code = (
        t.codes("locations", "label", _LABEL_CODES, PENDING_CODE, "a label")
        if t.has("locations", "label")
        else np.full(len(loc_claim), PENDING_CODE, dtype=np.int64)
    )
    return collapse_locations(loc_claim, loc_source, loc_code, n_sources)


def _official(t: _Tables, protocol: Protocol) -> npt.NDArray[np.bool_]:
    """Per source row, whether it is official (:meth:`OfficialMatcher.official_each`): decided once per distinct
    host, by path only on hosts the protocol declares with a path prefix."""
    pa, _, _ = _pyarrow()
    hosts = t.column("sources", "host")
    encoded = hosts.dictionary_encode() if not pa.types.is_dictionary(hosts.type) else hosts
    encoded = encoded.combine_chunks() if isinstance(encoded, pa.ChunkedArray) else encoded
    distinct = [None if h is None else str(h) for h in encoded.dictionary.to_pylist()]
    indices = np.asarray(encoded.indices.fill_null(len(distinct)), dtype=np.int64)

    def rows_on(wanted: Sequence[int]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        rows = np.flatnonzero(np.isin(indices, np.asarray(wanted, dtype=np.int64))).astype(np.int64)
        return rows, indices[rows]

    def paths(rows: npt.NDArray[np.int64]) -> list[str | None]:
        if not t.has("sources", "path"):
            return [None] * len(rows)
        texts = t.texts("sources", "path")
        return [texts[row] for row in rows.tolist()]

    return OfficialMatcher(protocol.official_domains).official_each(distinct, rows_on, paths, len(indices))


def score_arrow(
    protocol: Protocol,
    tables: Mapping[str, Any],
    *,
    by: Sequence[str] = (),
    macro: bool = False,
    ci: IntervalSettings | None = None,
    where: str = "<arrow tables>",
) -> ScoreResult:
    """Score an audit given as Arrow tables (``pyarrow.Table``, one per name of :data:`TABLES`) under
    ``protocol``: the same numbers as :func:`citeaudit.score` on the same audit as objects. Freed arrays are
    reused meanwhile (:func:`~citeaudit.core.memory.memory_kept`)."""
    with memory_kept():
        return score_columns(
            columns_from_arrow(protocol, tables, where=where),
            scoring=protocol.scoring,
            fingerprint=fingerprint(protocol),
            by=by,
            macro=macro,
            ci=ci,
        )


def read_parquet_tables(folder: str | Path) -> dict[str, Any]:
    """The tables of the columnar layout from ``folder/NAME.parquet`` (``citations.parquet`` may be absent);
    text columns stay dictionary-encoded as Parquet stores them.

    Only the layout's columns are read (a file may carry others), each file memory-mapped, and the files are read
    at once on threads of their own: pyarrow decodes without Python's interpreter lock, so the small tables are
    read while the locations are. The tables are allocated by the system allocator, not pyarrow's default pool:
    the pages that pool hands back and takes again made the numpy work that follows spend as much time in the
    kernel as in the sort (measured in docs/performance.md)."""
    return _parquet_tables(folder, streamed=False)


class _StreamedTable:
    """The locations of a layout folder, left in their Parquet file for :meth:`_Tables.packed_locations` to read a
    batch at a time: pyarrow decodes the next batches on its threads while this one is packed, and the table's
    columns are never all in memory at once (fresh pages cost the kernel more than the decoding). Read whole only
    when a whole column is asked for, as the checks that name an offending row do."""

    def __init__(self, path: Path, dataset: Any, columns: list[str]) -> None:
        self.path, self._dataset, self.column_names = path, dataset, columns
        self.num_rows = _readable(path, dataset.count_rows)
        self._whole: Any = None

    def column(self, name: str) -> Any:
        if self._whole is None:
            pa, _, _ = _pyarrow()
            columns, pool = self.column_names, pa.system_memory_pool()
            self._whole = _readable(self.path, lambda: self._dataset.to_table(columns=columns, memory_pool=pool))
        return self._whole.column(name)

    def batches(self, names: Sequence[str]) -> Iterator[Any]:
        pa, _, _ = _pyarrow()
        batches = self._dataset.to_batches(
            columns=list(names),
            batch_size=_STREAM_BATCH,
            batch_readahead=_STREAM_AHEAD,
            memory_pool=pa.system_memory_pool(),
        )
        while (batch := _readable(self.path, lambda: next(batches, None))) is not None:
            yield batch


_STREAM_BATCH, _STREAM_AHEAD = 1 << 17, 4
"""Rows in a batch of streamed locations, and the batches pyarrow decodes ahead of the one being packed."""


def _readable(path: Path, read: Callable[[], Any]) -> Any:
    """What ``read`` returns, a Parquet file that cannot be read refused with its path."""
    try:
        return read()
    except (OSError, ValueError) as exc:
        raise InvalidValue(str(path), "", f"not a readable Parquet file: {exc}") from None


def _parquet_tables(folder: str | Path, *, streamed: bool) -> dict[str, Any]:
    """:func:`read_parquet_tables`; with ``streamed``, the locations are a :class:`_StreamedTable`."""
    pa, _, pq = _pyarrow()
    import pyarrow.dataset as ds
    import pyarrow.fs as fs

    files = fs.LocalFileSystem(use_mmap=True)
    root = Path(folder)
    paths = {}
    for name in TABLES:
        path = root / f"{name}.parquet"
        if not path.exists():
            if name == "citations":
                continue
            raise InvalidValue(str(root), name, f"missing {path.name}; the layout has {', '.join(TABLES)}")
        paths[name] = path

    def open_dataset(path: Path, name: str) -> tuple[Any, list[str]]:
        schema = pq.read_schema(path, memory_map=True)
        columns = [column for column in _LAYOUT_COLUMNS[name] if column in schema.names]
        text = ds.ParquetFileFormat(read_options=ds.ParquetReadOptions(dictionary_columns=_text_columns(schema)))
        return ds.dataset(str(path), format=text, filesystem=files), columns

    def read(path: Path, name: str) -> Any:
        found, columns = _readable(path, lambda: open_dataset(path, name))
        if streamed and name == "locations":
            return _StreamedTable(path, found, columns)
        return _readable(path, lambda: found.to_table(columns=columns, memory_pool=pa.system_memory_pool()))

    with ThreadPoolExecutor(max_workers=len(paths)) as pool:
        reading = {name: pool.submit(read, path, name) for name, path in paths.items()}
        return {name: future.result() for name, future in reading.items()}


def _text_columns(schema: Any) -> list[str]:
    pa, _, _ = _pyarrow()
    return [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]


def score_parquet(
    folder: str | Path,
    protocol: Protocol,
    *,
    by: Sequence[str] = (),
    macro: bool = False,
    ci: IntervalSettings | None = None,
    run_kinds: Sequence[str] = ("platform",),
) -> ScoreResult:
    """Score an audit stored as Parquet: files in the columnar layout (``folder/answers.parquet`` …), or the
    dataset ``citeaudit export --format parquet`` writes (``folder/answers/protocol=…/run=…/…``), read for
    ``protocol`` and the answers of ``run_kinds`` (platform runs, as ``citeaudit score`` scores by default)."""
    root = Path(folder)
    with memory_kept():  # the tables read, and the arrays made from them, on memory freed before
        if (root / "protocols").is_dir():
            tables = read_export_tables(root, protocol, run_kinds)
        else:
            tables = _parquet_tables(root, streamed=True)
        return score_arrow(protocol, tables, by=by, macro=macro, ci=ci, where=str(folder))


def read_export_tables(
    folder: str | Path, protocol: Protocol, run_kinds: Sequence[str] = ("platform",)
) -> dict[str, Any]:
    """The columnar layout's tables from the engine tables ``citeaudit export --format parquet`` wrote, for one
    protocol and the answers of ``run_kinds``: one Parquet layout for the engines and this path alike."""
    pa, _, _ = _pyarrow()
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    root = Path(folder)
    wanted = partition_value(fingerprint(protocol))

    def table(name: str) -> Any:
        schema = pa.schema([pa.field(p, pa.string()) for p in PARTITIONS[name]])
        try:
            found = ds.dataset(root / name, format="parquet", partitioning=ds.partitioning(schema, flavor="hive"))
            read = found.to_table(filter=pc.field("protocol") == wanted)
        except (OSError, ValueError, pa.ArrowInvalid) as exc:
            raise InvalidValue(str(root / name), "", f"not a readable Parquet dataset: {exc}") from None
        return read

    protocols = table("protocols")
    if protocols.num_rows == 0:
        raise InvalidValue(
            str(root), "protocols", f"no protocol with fingerprint {fingerprint(protocol)[:23]}… in this export"
        )
    answers = table("answers")
    answers = answers.filter(pc.is_in(answers["run_kind"], value_set=pa.array(list(run_kinds), pa.string())))
    answers = answers.sort_by("answer")
    answer_keys = np.asarray(answers["answer"].to_numpy(), dtype=np.int64)
    claims = table("claims")
    claims = claims.filter(pc.is_in(claims["answer"], value_set=answers["answer"])).sort_by("claim")
    claim_keys = np.asarray(claims["claim"].to_numpy(), dtype=np.int64)
    sources = table("sources").sort_by("source")
    source_keys = np.asarray(sources["source"].to_numpy(), dtype=np.int64)
    facts = table("required_facts")
    fact_ids = dict(zip(facts["fact"].to_pylist(), facts["fact_id"].to_pylist(), strict=True))

    def rows(keys: Any, sorted_keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        values = np.asarray(keys.to_numpy(), dtype=np.int64)
        return np.searchsorted(sorted_keys, values).astype(np.int64)

    locations = table("edge_locations")
    locations = locations.filter(pc.is_in(locations["claim"], value_set=claims["claim"]))
    edges = table("edges")
    edges = edges.filter(pc.is_in(edges["claim"], value_set=claims["claim"]))
    # an edge's label as the columnar layout spells it: pending while it has none, disputed when reviewers disagree
    label_of = {
        (c, src): (lbl if lbl is not None else "disputed" if state == "disputed" else "pending")
        for c, src, lbl, state in zip(
            edges["claim"].to_pylist(),
            edges["source"].to_pylist(),
            edges["label"].to_pylist(),
            edges["review_state"].to_pylist(),
            strict=True,
        )
    }
    location_labels = [
        label_of.get((c, src), "pending")
        for c, src in zip(locations["claim"].to_pylist(), locations["source"].to_pylist(), strict=True)
    ]
    citations = table("citations")
    citations = citations.filter(pc.is_in(citations["answer"], value_set=answers["answer"]))
    hosts, paths = [], []
    for key in sources["source_key"].to_pylist():
        host, path = _host_and_path(str(key))
        hosts.append(host)
        paths.append(path)
    return {
        "answers": pa.table(
            {
                "question": answers["question"],
                "platform": answers["platform"],
                "run": answers["run"],
                "model": answers["model"],
                "locale": answers["locale"],
                "sample": answers["sample"],
            }
        ),
        "claims": pa.table(
            {
                "answer": rows(claims["answer"], answer_keys),
                "fact": pa.array([None if f is None else fact_ids[f] for f in claims["fact"].to_pylist()], pa.string()),
                "severity": claims["severity"],
            }
        ),
        "locations": pa.table(
            {
                "claim": rows(locations["claim"], claim_keys),
                "source": rows(locations["source"], source_keys),
                "label": pa.array(location_labels, pa.string()),
            }
        ),
        "sources": pa.table({"host": pa.array(hosts, pa.string()), "path": pa.array(paths, pa.string())}),
        "citations": pa.table(
            {"answer": rows(citations["answer"], answer_keys), "source": rows(citations["source"], source_keys)}
        ),
    }


def _host_and_path(key: str) -> tuple[str | None, str | None]:
    """The host and path of a source key (a normalised URL); ``(None, None)`` for a title-only card's key."""
    if "://" not in key:
        return None, None
    parts = urlsplit(key)
    return (parts.hostname or None), (parts.path or "/")
