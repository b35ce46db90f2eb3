"""Freed memory kept while a database is scored (core/memory.py): inside ``memory_kept`` a large block freed and
asked for again comes back without the kernel faulting its pages in again; outside, and after the last context
has left, glibc maps it afresh; an allocator configured through the environment is left alone.

Each case runs in a fresh interpreter, whose allocator no earlier test has touched. Page faults are counted with
``getrusage``: a fresh 64 MiB block takes at least 32 of them (2 MiB huge pages) and up to 16 384 (4 KiB pages);
a block served from memory the process already touched takes none of its own, so a few stray faults are allowed
for."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

GLIBC = sys.platform == "linux" and platform.libc_ver()[0] == "glibc"

_PROBE = textwrap.dedent(
    """
    import json, os, resource, sys, threading
    import numpy as np
    from citeaudit.core import memory
    from citeaudit.core.memory import memory_kept

    SIZE = 64 * 2**20 // 8  # 64 MiB of int64

    def again():
        '''Faults taken by a 64 MiB block asked for right after one like it was freed.'''
        block = np.ones(SIZE, dtype=np.int64)
        del block
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        block = np.ones(SIZE, dtype=np.int64)
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
        del block
        return faults

    found = {"outside": again()}
    with memory_kept():
        found["inside"] = again()
        reading, writing = os.pipe()
        if os.fork() == 0:  # a worker forked inside the context, as an import forks its reader
            os.write(writing, str(again()).encode())
            os._exit(0)
        os.close(writing)
        found["forked"] = int(os.read(reading, 100))
        os.wait()
        with memory_kept():
            found["nested"] = again()
        found["after nested"] = again()
    found["after"] = again()

    def enter_and_leave():
        with memory_kept():
            again()

    threads = [threading.Thread(target=enter_and_leave) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    found["after threads"] = again()
    found["depth"] = memory._depth
    print(json.dumps(found))
    """
)

FRESH = 32
"""The fewest faults a fresh 64 MiB block takes (32 pages of 2 MiB)."""
KEPT = 8
"""The most faults allowed a block served from memory already touched (none of its own; strays)."""


def _probe(**env: str) -> dict[str, int]:
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("MALLOC_") and name != "GLIBC_TUNABLES"
    }
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], env={**environment, **env}, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.skipif(not GLIBC, reason="glibc's allocator only: elsewhere memory_kept does nothing")
def test_a_freed_block_is_served_again_without_faults_inside_and_mapped_afresh_outside() -> None:
    found = _probe()
    assert found["outside"] >= FRESH
    assert found["inside"] <= KEPT
    assert found["nested"] <= KEPT
    assert found["forked"] <= KEPT  # the fork keeps the allocator's settings and the memory freed before it
    assert found["after nested"] <= KEPT  # the inner context left, the outer one still holds
    assert found["after"] >= FRESH  # glibc's defaults back once the last one left
    assert found["after threads"] >= FRESH  # four threads in and out: the last to leave restored them
    assert found["depth"] == 0


@pytest.mark.skipif(not GLIBC, reason="glibc's allocator only")
@pytest.mark.parametrize(
    "env",
    [{"MALLOC_MMAP_MAX_": "65536"}, {"MALLOC_TOP_PAD_": "131072"}, {"GLIBC_TUNABLES": "glibc.malloc.check=0"}],
    ids=lambda env: next(iter(env)),
)
def test_an_allocator_configured_through_the_environment_is_left_as_it_is(env: dict[str, str]) -> None:
    found = _probe(**env)
    # each of these settings leaves a 64 MiB block mapped afresh every time; memory_kept does not change that
    assert found["inside"] >= FRESH
    assert found["outside"] >= FRESH


def test_the_large_entry_points_score_inside_memory_kept_and_give_the_same_numbers(
    cli: Any, exporter_path: Path, db_path: Path, tmp_path: Path
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from citeaudit.core import memory
    from citeaudit.core.model import OfficialDomain, Protocol, Question, RequiredFact
    from citeaudit.scoring import columnar, paths
    from citeaudit.scoring.columnar import score_arrow, score_parquet
    from citeaudit.scoring.paths import score_path

    entered: list[str] = []

    @contextlib.contextmanager
    def counted(where: str) -> Iterator[None]:
        with memory.memory_kept():
            entered.append(where)
            yield

    assert cli("ingest", exporter_path, "--db", db_path).exit_code == 0
    protocol = Protocol(
        "p",
        "1",
        official_domains=(OfficialDomain(domain="brand.com"),),
        questions=(Question("q0", "Q?", None, (RequiredFact("f0", "a fact"),)),),
    )
    tables = {
        "answers": pa.table({"question": ["q0", "q0"], "platform": ["a", "b"]}),
        "claims": pa.table({"answer": pa.array([0, 1], pa.int64()), "fact": ["f0", None]}),
        "locations": pa.table(
            {
                "claim": pa.array([0, 0, 1], pa.int64()),
                "source": pa.array([0, 0, 1], pa.int64()),
                "label": ["supported", "supported", None],
            }
        ),
        "sources": pa.table({"host": ["brand.com", "review.org"]}),
    }
    for name, table in tables.items():
        pq.write_table(table, tmp_path / f"{name}.parquet")
    plain = (score_path(db_path).result.to_dict(), score_arrow(protocol, tables).to_dict())
    plain_parquet = score_parquet(tmp_path, protocol).to_dict()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(paths, "memory_kept", lambda: counted("database"))
        patch.setattr(columnar, "memory_kept", lambda: counted("columnar"))
        kept = (score_path(db_path).result.to_dict(), score_arrow(protocol, tables).to_dict())
        assert entered == ["database", "columnar"]
        assert score_parquet(tmp_path, protocol).to_dict() == plain_parquet
        assert entered == ["database", "columnar", "columnar", "columnar"]  # score_parquet, then its score_arrow
    assert kept == plain
    # one edge of two locations (supported) and one pending: 2 unique edges, 3 locations
    assert plain_parquet["edges"]["unique"] == 2
    assert plain_parquet["edges"]["locations"] == 3
    assert memory._depth == 0


def test_an_import_writes_inside_memory_kept(cli: Any, exporter_path: Path, db_path: Path) -> None:
    import citeaudit.ingest as ingest
    from citeaudit.core import memory

    entered: list[int] = []

    @contextlib.contextmanager
    def counted() -> Iterator[None]:
        with memory.memory_kept():
            entered.append(memory._depth)
            yield

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ingest, "memory_kept", counted)
        assert cli("ingest", exporter_path, "--db", db_path).exit_code == 0
    assert entered == [1]  # once, the outermost
    assert memory._depth == 0
