"""The ``nli`` judge: any local transformers sequence-classification NLI model, loaded from a folder.

Each passage is the premise and the claim the hypothesis. The model's own ``id2label`` names decide the
mapping: a name containing ``entail`` (or ``support``, ``attributable``) → ``supported``; ``contradict`` →
``conflicting``; ``neutral`` (or ``not``-prefixed support names) → ``irrelevant``. A model whose labels cannot be
mapped is refused when loaded, naming its labels, unless ``label_map`` gives the mapping.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from citeaudit.core.errors import JudgeError, MissingExtra
from citeaudit.core.model import Label
from citeaudit.judges._base import JudgeRequest, JudgeTraits, Suggestion

__all__ = ["NliJudge", "map_nli_label"]

NLI_VERSION = "nli-v1"


def map_nli_label(name: str) -> Label | None:
    """The label an NLI class name stands for, or ``None`` when it is not recognised."""
    lowered = name.lower().replace("_", " ").replace("-", " ")
    negative = lowered.startswith(("not ", "non ", "no ")) or " not " in f" {lowered} "
    if "contradict" in lowered or "refute" in lowered:
        return Label.CONFLICTING
    if "neutral" in lowered or (negative and ("support" in lowered or "attribut" in lowered or "entail" in lowered)):
        return Label.IRRELEVANT
    if "entail" in lowered or "support" in lowered or "attribut" in lowered:
        return Label.SUPPORTED
    return None


def _folder_digest(folder: Path) -> str:
    # Identifies the exact weights: hash of the config plus the weight files' sizes and names.
    digest = hashlib.sha256()
    for path in sorted(folder.iterdir()):
        if path.is_file():
            digest.update(path.name.encode())
            digest.update(str(path.stat().st_size).encode())
    digest.update((folder / "config.json").read_bytes())
    return digest.hexdigest()[:12]


class NliJudge:
    """A local NLI model on the CPU; ``supported`` when some passage entails the claim."""

    name = "nli"
    version = NLI_VERSION
    battery_traits = JudgeTraits(deterministic=True, reads_passage_order=False, reads_label_order=False)
    """Same request, same label; each passage is read on its own; no label options are shown."""

    def __init__(
        self, path: str | Path, *, label_map: Mapping[str, Label] | None = None, max_length: int = 512
    ) -> None:
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
            from transformers.utils import logging as transformers_logging
        except ImportError as exc:
            raise MissingExtra("models", "the nli judge") from exc
        folder = Path(path)
        if not (folder / "config.json").is_file():
            raise JudgeError(f"no transformers model at {str(folder)!r} (config.json missing)")
        transformers_logging.disable_progress_bar()
        self._torch: Any = torch
        self._tokenizer: Any = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        self._model: Any = AutoModelForSequenceClassification.from_pretrained(str(folder), local_files_only=True)
        self._model.eval()
        # A model with fewer positions than max_length would fail on a long passage: truncate to what it can read.
        self.max_length = min(max_length, int(getattr(self._model.config, "max_position_embeddings", max_length)))
        names: dict[int, str] = {int(i): str(n) for i, n in self._model.config.id2label.items()}
        mapping: dict[int, Label] = {}
        for index, class_name in names.items():
            label = (label_map or {}).get(class_name) or map_nli_label(class_name)
            if label is None:
                raise JudgeError(
                    f"cannot map the NLI class {class_name!r} of {str(folder)!r} to a label "
                    f"(classes: {sorted(names.values())}); pass label_map"
                )
            mapping[index] = label
        if Label.SUPPORTED not in mapping.values():
            raise JudgeError(
                f"the model at {str(folder)!r} has no entailment class (classes: {sorted(names.values())})"
            )
        self._names = names
        self._mapping = mapping
        self.model: str | None = f"{folder.resolve()}@{_folder_digest(folder)}"

    def _probabilities(self, premise: str, hypothesis: str) -> dict[int, float]:
        encoded = self._tokenizer(
            premise, hypothesis, truncation="only_first", max_length=self.max_length, return_tensors="pt"
        )
        with self._torch.no_grad():
            logits = self._model(**encoded).logits[0]
        probabilities = self._torch.softmax(logits, dim=-1).tolist()
        return {i: float(p) for i, p in enumerate(probabilities)}

    def judge(self, request: JudgeRequest) -> Suggestion:
        """Score every passage; entailment by any passage wins, then contradiction, else the best neutral."""
        if not request.passages:
            return Suggestion(Label.UNKNOWN, self.name, self.version, self.model, failure="no passage to judge")
        best: dict[Label, tuple[float, str, dict[int, float]]] = {}
        for passage in request.passages:
            probabilities = self._probabilities(passage, request.claim)
            top = max(probabilities, key=lambda i: probabilities[i])
            label = self._mapping[top]
            if label not in best or probabilities[top] > best[label][0]:
                best[label] = (probabilities[top], passage, probabilities)
        for label in (Label.SUPPORTED, Label.CONFLICTING, Label.PARTIAL, Label.IRRELEVANT):
            if label in best:
                confidence, passage, probabilities = best[label]
                scores = {self._names[i]: p for i, p in probabilities.items()}
                assert math.isfinite(confidence)
                return Suggestion(
                    label,
                    self.name,
                    self.version,
                    self.model,
                    quote=passage,
                    reasoning=", ".join(f"{n} {p:.3f}" for n, p in scores.items()),
                    confidence=confidence,
                    extra=scores,
                )
        raise AssertionError("unreachable: every class maps to a label")
