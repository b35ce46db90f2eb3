"""Write the JSON Schema of citeaudit.audit/v1 from the boundary models (a test checks it is current).

Run: python scripts/make_schema.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from citeaudit.interchange import AuditDocument

OUT = Path(__file__).resolve().parent.parent / "src" / "citeaudit" / "schemas" / "audit-v1.schema.json"


def render() -> str:
    """The schema file's exact text."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "citeaudit.audit/v1",
        **AuditDocument.model_json_schema(),
    }
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    OUT.write_text(render(), encoding="utf-8")
    sys.stdout.write(f"wrote {OUT}\n")
