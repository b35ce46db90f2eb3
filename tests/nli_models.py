"""A tiny BERT NLI model built and saved by the tests, so the nli judge's real loading code runs offline."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

WORDS = ("the", "ax220", "has", "a", "20", "l", "tank", "weighs", "35", "kg", "is", "red")


def build_nli_model(folder: Path, class_names: Sequence[str], bias: Sequence[float]) -> Path:
    """Save a 1-layer BERT classifier whose output is its bias alone (zero classifier weights).

    With zero weights the logits equal ``bias`` for every input, so the softmax is known by hand.
    """
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab_file=str(vocab), do_lower_case=True)
    config = BertConfig(
        vocab_size=5 + len(WORDS),
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=16,
        max_position_embeddings=64,
        id2label=dict(enumerate(class_names)),
        label2id={name: i for i, name in enumerate(class_names)},
    )
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor(list(bias)))
    model.save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder
