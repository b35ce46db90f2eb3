"""``claim_text`` returns a span as it stands when it holds nothing to remove or fold, and plain text with its
markers before the stop dropped when it is only that: the same text as its full path (artefacts removed, a
leading bullet dropped, white space folded, no space before punctuation)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.ingest.sentences import ARTEFACT
from citeaudit.ingest.text import claim_text

_BULLET = re.compile(r"^\s*(?:[-*•·]|\d{1,3}[.)]|#{1,6})\s+")
_SPACE_BEFORE_PUNCT = re.compile(r" (?=[,.;:!?。！？；])")


def _full_path(text: str, start: int, end: int) -> str:
    """Every step of ``claim_text``, always run."""
    cleaned = ARTEFACT.sub(" ", text[start:end])
    bullet = _BULLET.match(cleaned)
    if bullet is not None:
        cleaned = cleaned[bullet.end() :]
    return _SPACE_BEFORE_PUNCT.sub("", " ".join(cleaned.split()))


# words, single and double spaces, other white space, punctuation, markers, brackets, bullets and digits
_PIECES = st.sampled_from(
    [
        "1) ",
        "- ",
        "2. ",
        "## ",
        "word",
        "Tank",
        "20",
        "3.",
        "1)",
        " ",
        "  ",
        "\n",
        "\t",
        "\xa0",
        "\u3000",
        ",",
        ".",
        "?",
        "。",
        "；",
        ":",
        "[1]",
        "[1]",
        " [12]",
        "[1234]",
        "[12345]",
        "[٣]",
        "!",
        "[^2]",
        "(",
        ")",
        "【3†source】",
        "\ue200cite\ue201",
        "-",
        "*",
        "•",
        "#",
        "水箱",
        "é",
        "'",
        '"',
    ]
)


@settings(max_examples=2000)
@given(pieces=st.lists(_PIECES, max_size=12), cut=st.tuples(st.integers(0, 3), st.integers(0, 3)))
def test_the_plain_span_shortcut_gives_the_full_paths_text(pieces: list[str], cut: tuple[int, int]) -> None:
    text = "".join(pieces)
    start, end = min(cut[0], len(text)), max(min(cut[0], len(text)), len(text) - cut[1])
    assert claim_text(text, start, end) == _full_path(text, start, end)


def test_the_shortcut_is_taken_and_left() -> None:
    assert claim_text("The AX220 weighs 38 kg.", 0, 23) == "The AX220 weighs 38 kg."  # taken: nothing to change
    assert claim_text("1. The AX220 weighs 38 kg", 0, 25) == "The AX220 weighs 38 kg"  # a bullet: the full path
    assert claim_text("It weighs 38 kg .", 0, 17) == "It weighs 38 kg."  # a space before the stop is dropped
    assert claim_text("It weighs\u00a038 kg", 0, 15) == "It weighs 38 kg"  # other white space is folded
    # markers before the stop, as Sonar writes them: they go, and the space before them
    assert claim_text("It weighs 38 kg [1][7].", 0, 23) == "It weighs 38 kg."
    assert claim_text("It weighs 38 kg [1] [7]!", 0, 24) == "It weighs 38 kg!"
    assert claim_text("It weighs 38 kg  [1].", 0, 21) == "It weighs 38 kg."  # two spaces: the full path, alike
    assert claim_text("It weighs 38 kg [12345].", 0, 24) == "It weighs 38 kg [12345]."  # five digits: no marker
    assert claim_text("It weighs 38 kg [1]", 0, 19) == "It weighs 38 kg"  # no stop: the full path, alike
