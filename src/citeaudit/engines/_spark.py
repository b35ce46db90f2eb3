"""The Spark engine: the same SQL on Spark SQL, over the Parquet dataset the export writes.

Locally this starts (or reuses) a ``local[*]`` session; under ``spark-submit`` it uses the session the
cluster provides (see :mod:`citeaudit.engines.spark_job`). Spark needs a Java runtime (17 or newer).
"""

from __future__ import annotations

import os
import shutil
import warnings
from typing import Any

from citeaudit.core.convention_sql import DIALECTS, preamble_sql
from citeaudit.core.errors import EngineFailed, MissingExtra
from citeaudit.engines._tables import ProtocolRow

__all__ = ["SparkRunner", "java_missing", "local_session", "session_for_job"]

DIALECT = DIALECTS["spark"]


def java_missing() -> str | None:
    """Why Spark cannot start here (no Java runtime), or ``None`` when a ``java`` is found."""
    home = os.environ.get("JAVA_HOME")
    if home and os.path.exists(os.path.join(home, "bin", "java")):
        return None
    if shutil.which("java"):
        return None
    return "no Java runtime: Spark needs one (17 or newer), e.g. apt-get install openjdk-17-jre-headless"


def local_session() -> Any:
    """The active Spark session, else a new ``local[*]`` one sized for one machine."""
    with warnings.catch_warnings():
        # pyspark warns at import about pandas versions it has not been tested with; no pandas is used here
        warnings.simplefilter("ignore", FutureWarning)
        try:
            from pyspark.sql import SparkSession
        except ImportError:
            raise MissingExtra("spark", "The spark engine") from None
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    missing = java_missing()
    if missing is not None:
        raise MissingExtra(f"The spark engine cannot start: {missing}")
    session = (
        SparkSession.builder.master("local[*]")
        .appName("citeaudit")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        # a few partitions per core: the default 200 is meant for clusters and makes small scopes slow
        .config("spark.sql.shuffle.partitions", str(max(4, 2 * (os.cpu_count() or 1))))
        # local mode runs everything in the driver, whose default heap (1 GB) makes large scopes spill and stall
        .config("spark.driver.memory", os.environ.get("CITEAUDIT_SPARK_DRIVER_MEMORY", "4g"))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def session_for_job() -> Any:
    """The session of a ``spark-submit`` job: whatever master and settings the submission gave."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        try:
            from pyspark.sql import SparkSession
        except ImportError:
            raise MissingExtra("spark", "The spark engine") from None
    return SparkSession.builder.appName("citeaudit").getOrCreate()


class SparkRunner:
    """A Spark session with the engine tables as temporary views over a Parquet dataset."""

    def __init__(self, session: Any, root: str) -> None:
        self._spark = session
        for statement in preamble_sql(DIALECT, root).split(";\n"):
            self._collect(statement.rstrip(";"))

    def protocols(self) -> list[ProtocolRow]:
        """The rows of the ``protocols`` table."""
        _, rows = self._collect(
            "SELECT DISTINCT protocol_id, version, scoring, fingerprint, weighted, body FROM protocols"
        )
        return sorted((ProtocolRow(*row) for row in rows), key=lambda r: (r.protocol_id, r.version))

    def query(self, sql: str) -> dict[str, list[Any]]:
        """A (small) query result as columns."""
        names, rows = self._collect(sql)
        return {name: [row[i] for row in rows] for i, name in enumerate(names)}

    def _collect(self, sql: str) -> tuple[list[str], list[Any]]:
        from pyspark.errors import PySparkException

        try:
            frame = self._spark.sql(sql)
            return list(frame.columns), frame.collect()
        except PySparkException as exc:
            raise EngineFailed("spark", exc) from None
