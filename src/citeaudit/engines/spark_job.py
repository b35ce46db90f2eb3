"""``spark-submit`` entry point: score a Parquet dataset on the cluster the job is submitted to.

::

    spark-submit --master yarn "$(python -c 'import citeaudit.engines.spark_job as j; print(j.__file__)')" \\
        s3a://bucket/audit --by platform --ci

citeaudit (with its ``spark`` extra) must be installed where the driver runs; the executors only run Spark SQL.
The result is printed as the JSON of ``citeaudit score --format json``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from citeaudit.core.errors import CiteauditError
from citeaudit.core.model import RunKind
from citeaudit.core.scope import Scope, parse_where
from citeaudit.core.scoring import IntervalSettings

__all__ = ["main"]


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="citeaudit-spark", description="Score a citeaudit Parquet dataset on Spark.")
    parser.add_argument("root", help="Dataset root written by `citeaudit export --format parquet` (any Spark path).")
    parser.add_argument("--by", default="", help="Comma-separated dimensions to group by.")
    parser.add_argument("--kind", choices=["platform", "fixture", "all"], default="platform", help="Run kinds.")
    parser.add_argument("--where", action="append", default=[], help="DIMENSION=VALUE (repeatable).")
    parser.add_argument("--protocol", default=None, help="Protocol id, id@version or fingerprint prefix.")
    parser.add_argument("--ci", action="store_true", help="Add cluster-bootstrap intervals over questions.")
    parser.add_argument("--resamples", type=int, default=9999, help="Bootstrap resamples for --ci.")
    parser.add_argument("--seed", type=int, default=0, help="Random seed for --ci.")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one scoring job on the active (or a new) Spark session and print its JSON; 2 on bad input."""
    from citeaudit.core.scored import ScoredPath, engine_not_computed
    from citeaudit.engines import score_with_engine
    from citeaudit.engines._spark import session_for_job

    args = _arguments(argv)
    try:
        kinds = frozenset(RunKind) if args.kind == "all" else frozenset({RunKind(args.kind)})
        scope = Scope(run_kinds=kinds, where=parse_where(args.where))
        by = tuple(part.strip() for part in args.by.split(",") if part.strip())
        settings = IntervalSettings(resamples=args.resamples, seed=args.seed) if args.ci else None
        session_for_job()
        scored = score_with_engine(args.root, "spark", scope=scope, by=by, protocol=args.protocol, ci=settings)
    except CiteauditError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    not_computed = engine_not_computed("spark")
    print(ScoredPath(scored.result, scored.protocol, scored.excluded_by_kind, not_computed=not_computed).to_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
