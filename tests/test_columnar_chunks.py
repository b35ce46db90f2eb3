"""The columnar entry points read the locations a chunk and a block at a time: Parquet files of many small row
groups, of one, and Arrow tables whose columns are chunked differently give the same edges and scores, and a
bad value in a later row group is refused with its row counted over the whole table."""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citeaudit.core.errors import InvalidValue, UnknownReference
from citeaudit.core.model import OfficialDomain, Protocol, Question, RequiredFact
from citeaudit.scoring import columnar
from citeaudit.scoring.columnar import columns_from_arrow, score_arrow, score_parquet

LABEL_NAMES = ["supported", "partial", "conflicting", "irrelevant", "unknown", "pending", "disputed"]
"""The layout's label names in code order (0 = supported … 5 = pending, 6 = disputed)."""
PROTOCOL = Protocol(
    "p",
    "1",
    official_domains=(OfficialDomain(domain="brand.com"),),
    questions=(Question("q0", "Q?", None, (RequiredFact("f0", "a fact"), RequiredFact("f1", "another"))),),
)
CHUNKS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _tables(claim: list[int], source: list[int], label: list[str | None]) -> dict[str, Any]:
    """Three answers, four claims (answers 0, 0, 1, 2; facts f0, none, f1, f0), three sources (brand.com twice)."""
    return {
        "answers": pa.table({"question": ["q0", "q0", "q0"], "platform": ["a", "b", "a"]}),
        "claims": pa.table({"answer": pa.array([0, 0, 1, 2], pa.int64()), "fact": ["f0", None, "f1", "f0"]}),
        "locations": pa.table(
            {
                "claim": pa.array(claim, pa.int64()),
                "source": pa.array(source, pa.int64()),
                "label": pa.array(label, pa.string()),
            }
        ),
        "sources": pa.table({"host": ["brand.com", "review.org", "brand.com"]}),
    }


def _write(folder: Path, tables: dict[str, Any], row_group_size: int | None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        pq.write_table(table, folder / f"{name}.parquet", row_group_size=row_group_size)
    return folder


def _groups(folder: Path) -> int:
    return int(pq.ParquetFile(folder / "locations.parquet").metadata.num_row_groups)


def _edges(columns: Any) -> dict[tuple[int, int], tuple[int, int]]:
    return {
        (int(c), int(s)): (int(code), int(n))
        for c, s, code, n in zip(
            columns.edge_claim, columns.edge_source, columns.edge_code, columns.edge_locations, strict=True
        )
    }


def test_row_groups_of_seven_and_one_group_give_the_hand_counted_edges(tmp_path: Path) -> None:
    # 16 locations: edge (0, 0) five times, (1, 2) four times, (2, 1) three, (3, 0) twice, (3, 2) and (2, 0) once.
    claim = [0, 1, 2, 0, 3, 1, 0, 2, 3, 1, 0, 2, 3, 1, 0, 2]
    source = [0, 2, 1, 0, 0, 2, 0, 1, 2, 2, 0, 0, 0, 2, 0, 1]
    names = {(0, 0): "supported", (1, 2): "partial", (2, 1): None, (3, 0): "supported", (3, 2): "disputed"}
    names[(2, 0)] = "supported"
    label = [names[(c, s)] for c, s in zip(claim, source, strict=True)]
    tables = _tables(claim, source, label)
    # edge -> (code, locations): supported 0, partial 1, null = pending 5, disputed 6; counts 5+4+3+2+1+1 = 16
    expected = {(0, 0): (0, 5), (1, 2): (1, 4), (2, 1): (5, 3), (3, 0): (0, 2), (3, 2): (6, 1), (2, 0): (0, 1)}
    assert _edges(columns_from_arrow(PROTOCOL, tables)) == expected
    reference = score_arrow(PROTOCOL, tables, by=["platform"]).to_dict()
    for size, groups in ((7, 3), (None, 1)):  # 16 rows in groups of 7: 7 + 7 + 2
        folder = _write(tmp_path / f"groups-{size}", tables, size)
        assert _groups(folder) == groups
        assert _edges(columns_from_arrow(PROTOCOL, columnar.read_parquet_tables(folder))) == expected
        assert score_parquet(folder, PROTOCOL, by=["platform"]).to_dict() == reference
    # platform a: answers 0 and 2, so claims 0, 1 (answer 0) and 3 (answer 2): edges (0, 0), (1, 2), (3, 0),
    # (3, 2), 5 + 4 + 2 + 1 = 12 locations; platform b: answer 1, claim 2: edges (2, 1), (2, 0), 3 + 1 = 4
    edges = {g["by"]["platform"]: g["edges"] for g in reference["groups"]}
    assert [(p, e["unique"], e["locations"]) for p, e in sorted(edges.items())] == [("a", 4, 12), ("b", 2, 4)]


@st.composite
def audits(draw: st.DrawFn) -> tuple[list[int], list[int], list[str | None]]:
    """Locations over the four claims and three sources of :func:`_tables`, one label per (claim, source)."""
    pair_label = draw(st.lists(st.sampled_from([*LABEL_NAMES, None]), min_size=12, max_size=12))
    pairs = draw(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), max_size=60))
    return [c for c, _ in pairs], [s for _, s in pairs], [pair_label[c * 3 + s] for c, s in pairs]


def _split(values: list[Any], cuts: list[int], kind: Any) -> Any:
    """``values`` as a chunked array cut at ``cuts`` (positions, any order)."""
    bounds = sorted({0, len(values), *(c % (len(values) + 1) for c in cuts)})
    return pa.chunked_array([pa.array(values[a:b], kind) for a, b in itertools.pairwise(bounds)], kind)


@CHUNKS
@given(
    audits(),
    st.sampled_from([1, 7, None]),
    st.sampled_from([1, 3, 1 << 16]),
    st.sampled_from([1, 5, 1 << 17]),
    st.lists(st.integers(0, 60), max_size=4),
    st.lists(st.integers(0, 60), max_size=4),
)
def test_any_chunking_gives_the_edges_counted_one_by_one(
    locations: tuple[list[int], list[int], list[str | None]],
    row_group_size: int | None,
    block: int,
    stream_batch: int,
    claim_cuts: list[int],
    label_cuts: list[int],
) -> None:
    claim, source, label = locations
    codes = {name: code for code, name in enumerate(LABEL_NAMES)}
    expected: dict[tuple[int, int], tuple[int, int]] = {}
    for c, s, name in zip(claim, source, label, strict=True):
        code, n = expected.get((c, s), (codes[name or "pending"], 0))
        expected[(c, s)] = (code, n + 1)
    tables = _tables(claim, source, label)
    # the claim and label columns chunked at other places than the source column
    chunked = tables["locations"].set_column(0, "claim", _split(claim, claim_cuts, pa.int64()))
    chunked = chunked.set_column(2, "label", _split(label, label_cuts, pa.string()).dictionary_encode())
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as name:
        patch.setattr(columnar, "PACK_BLOCK", block)
        patch.setattr(columnar, "_STREAM_BATCH", stream_batch)  # Parquet locations streamed in batches this long
        found = columns_from_arrow(PROTOCOL, {**tables, "locations": chunked})
        assert _edges(found) == expected
        reference = score_arrow(PROTOCOL, tables, by=["platform"]).to_dict()
        assert score_arrow(PROTOCOL, {**tables, "locations": chunked}, by=["platform"]).to_dict() == reference
        folder = _write(Path(name), tables, row_group_size)
        assert score_parquet(folder, PROTOCOL, by=["platform"]).to_dict() == reference


def _bad_files(tmp_path: Path, row: int, column: str, value: Any) -> Path:
    """Twenty locations, all of edge (0, 0) labelled supported, in row groups of 7 (rows 0–6, 7–13, 14–19), with
    ``value`` in ``column`` of ``row``."""
    columns: dict[str, list[Any]] = {"claim": [0] * 20, "source": [0] * 20, "label": ["supported"] * 20}
    columns[column][row] = value
    folder = _write(tmp_path / f"{column}-{row}", _tables(columns["claim"], columns["source"], columns["label"]), 7)
    assert _groups(folder) == 3
    return folder


def test_a_bad_value_in_a_later_row_group_is_named_with_its_row_in_the_whole_table(tmp_path: Path) -> None:
    # row 16 is the third group's row 2: 7 + 7 + 2 = 16
    with pytest.raises(UnknownReference, match=r"locations\[16\]\.claim: 4 is not a row of claims \(4 rows\)"):
        score_parquet(_bad_files(tmp_path, 16, "claim", 4), PROTOCOL)
    with pytest.raises(UnknownReference, match=r"locations\[9\]\.source: -1 is not a row of sources \(3 rows\)"):
        score_parquet(_bad_files(tmp_path, 9, "source", -1), PROTOCOL)
    # one past the last source (3 rows: 0, 1, 2), in the second group
    with pytest.raises(UnknownReference, match=r"locations\[12\]\.source: 3 is not a row of sources \(3 rows\)"):
        score_parquet(_bad_files(tmp_path, 12, "source", 3), PROTOCOL)
    with pytest.raises(InvalidValue, match=r"locations\[19\]\.label: 'maybe' is not a label"):
        score_parquet(_bad_files(tmp_path, 19, "label", "maybe"), PROTOCOL)
    with pytest.raises(InvalidValue, match=r"locations\[8\]\.claim: null; every row refers to a row of claims"):
        score_parquet(_bad_files(tmp_path, 8, "claim", None), PROTOCOL)
    # the same edge labelled otherwise in the last group: one edge, two labels
    with pytest.raises(InvalidValue, match=r"locations\.label: locations of one edge carry different label codes"):
        score_parquet(_bad_files(tmp_path, 18, "label", "partial"), PROTOCOL)


def test_columns_are_checked_in_turn_whatever_group_holds_the_first_bad_value() -> None:
    # a bad source in row 2 and a bad claim in row 15: the claim column is checked first, as it always was
    tables = _tables([0] * 15 + [7] + [0] * 4, [0, 0, 5] + [0] * 17, ["supported"] * 20)
    with pytest.raises(UnknownReference, match=r"locations\[15\]\.claim: 7 is not a row of claims"):
        score_arrow(PROTOCOL, tables)


def test_a_dictionary_value_no_row_uses_is_not_refused() -> None:
    # the label dictionary holds 'maybe' at index 1, but every row points at index 0 ('supported')
    label = pa.DictionaryArray.from_arrays(pa.array([0, 0, 0], pa.int32()), pa.array(["supported", "maybe"]))
    tables = _tables([0, 0, 2], [0, 0, 1], ["supported"] * 3)
    tables["locations"] = tables["locations"].set_column(2, "label", label)
    # edges (0, 0) twice and (2, 1) once, both supported (code 0)
    assert _edges(columns_from_arrow(PROTOCOL, tables)) == {(0, 0): (0, 2), (2, 1): (0, 1)}


def test_a_file_that_is_not_parquet_is_refused_with_its_path(tmp_path: Path) -> None:
    folder = _write(tmp_path / "files", _tables([0], [0], ["supported"]), None)
    (folder / "locations.parquet").write_bytes(b"PAR1 and nothing else")
    with pytest.raises(InvalidValue, match=r"locations\.parquet: not a readable Parquet file"):
        score_parquet(folder, PROTOCOL)


def _whole_read_refused(self: Any, name: str) -> Any:
    raise AssertionError(f"the streamed locations were read whole for column {name!r}")


def test_parquet_locations_are_streamed_never_read_whole_when_every_value_is_good(tmp_path: Path) -> None:
    # 30 locations in row groups of 4 (8 groups: 7 of 4 + 1 of 2), streamed in batches of 3
    claim, source = [i % 4 for i in range(30)], [(i // 4) % 3 for i in range(30)]
    names = {(c, s): LABEL_NAMES[(c + s) % 5] for c in range(4) for s in range(3)}
    tables = _tables(claim, source, [names[(c, s)] for c, s in zip(claim, source, strict=True)])
    reference = score_arrow(PROTOCOL, tables, by=["platform"]).to_dict()
    folder = _write(tmp_path / "streamed", tables, 4)
    assert _groups(folder) == 8
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(columnar, "_STREAM_BATCH", 3)
        patch.setattr(columnar._StreamedTable, "column", _whole_read_refused)
        assert score_parquet(folder, PROTOCOL, by=["platform"]).to_dict() == reference
        # a bad value needs the whole column, to name its row: the guard above is what a refusal reaches
        with pytest.raises(AssertionError, match="read whole for column 'claim'"):
            score_parquet(_bad_files(tmp_path, 16, "claim", 4), PROTOCOL)


def test_a_row_group_that_cannot_be_decoded_is_refused_with_its_path_while_streaming(tmp_path: Path) -> None:
    folder = _bad_files(tmp_path, 0, "label", "supported")  # twenty good rows in groups of 7, 7 and 6
    column = pq.ParquetFile(folder / "locations.parquet").metadata.row_group(1).column(0)
    data = bytearray((folder / "locations.parquet").read_bytes())
    # the second group's claim column, its dictionary page and data pages, overwritten; the footer stays readable
    start = column.dictionary_page_offset if column.has_dictionary_page else column.data_page_offset
    data[start : start + column.total_compressed_size] = b"\xff" * column.total_compressed_size
    (folder / "locations.parquet").write_bytes(bytes(data))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(columnar._StreamedTable, "column", _whole_read_refused)
        with pytest.raises(InvalidValue, match=r"locations\.parquet: not a readable Parquet file"):
            score_parquet(folder, PROTOCOL)
