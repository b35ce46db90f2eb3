"""Documents and stand-ins that make text extraction misbehave, for the resolver's hostile-input tests.

The stand-ins replace the reader a worker process runs; they travel to the worker by reference, so they live in
a module of their own that the worker can import.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


def never_finishes(*args: object) -> None:
    """A reader that never returns (as a parser stuck on a pathological document would). When the environment
    names a file in ``CITEAUDIT_TEST_STARTED``, its process id is written there first, so a test knows the worker
    is busy."""
    marker = os.environ.get("CITEAUDIT_TEST_STARTED")
    if marker:
        Path(marker).write_text(str(os.getpid()), encoding="ascii")
    threading.Event().wait()


def shared_stream_pdf(pages: int, operations: int) -> bytes:
    """A PDF whose ``pages`` pages all show one content stream of ``operations`` text operations: a small file
    whose text extraction repeats that stream on every page (about 1.3 s for 40 pages of 400 operations)."""
    stream = b"".join(b"BT /F1 12 Tf 72 720 Td (AX220 tank 20 L) Tj ET\n" for _ in range(operations))
    kids = b" ".join(f"{6 + n} 0 R".encode() for n in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count " + str(pages).encode() + b" >>",
        b"<< >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>"
    )
    objects += [page] * pages
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)
