"""Presenting results: terminal tables, JSON and CSV."""

from citeaudit.report.formats import result_csv, result_json
from citeaudit.report.tables import comparison_table, fraction, score_tables

__all__ = ["comparison_table", "fraction", "result_csv", "result_json", "score_tables"]
