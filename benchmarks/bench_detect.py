"""Format detection: the structure of a file's first JSON value, read as a stream, against parsing it whole.

Files: an Anthropic message written with sorted keys (``"type": "message"`` after the content, as recorders write
it) whose content is the blocks of a real recording repeated to about 20 MB when ../shared/data/engine-payloads is
there (generated text blocks otherwise), and a JSON Lines file of 30 000 Sonar answers. Baselines in the same
run: for the message, ``json.loads`` of the whole document, the floor of any detection that looks at the whole
structure at once (it needs the whole document in memory); for JSON Lines, ``json.loads`` of every line, what a
detection that read the whole file would pay. Reported: median time for each, their ratio, and the peak memory
each takes (tracemalloc). Targets: on the message, at most 5x the baseline's time; on JSON Lines, under 1 % of
it (only the first line is read); peak memory under 2 MB for both, whatever the file's size.

Run: make bench   (or: python benchmarks/bench_detect.py [--repeats N])
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from citeaudit.ingest import detect_reader
from citeaudit.ingest.shape import shape_of_file

RECORDING = (
    Path(__file__).resolve().parents[1].parent / "shared/data/engine-payloads/anthropic/pydantic-sf-weather-a.json"
)
TARGET_RATIO = 5.0
TARGET_PEAK = 2_000_000


def _anthropic(path: Path, size: int) -> None:
    if RECORDING.is_file():
        blocks = json.loads(RECORDING.read_text(encoding="utf-8"))["content"]
    else:
        blocks = [{"type": "text", "text": "The AX220 has a 20 L tank. " * 40}]
    content: list[Any] = []
    written = 0
    while written < size:
        content.extend(blocks)
        written += len(json.dumps(blocks))
    body = {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": content,
        "stop_reason": "end_turn",
    }
    path.write_text(json.dumps(body, sort_keys=True), encoding="utf-8")


def _sonar_lines(path: Path, answers: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for n in range(answers):
            line = {
                "id": f"a{n}",
                "model": "sonar",
                "object": "chat.completion",
                "search_results": [{"title": f"Page {k}", "url": f"https://site{k}.example/{n}"} for k in range(8)],
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": "The AX220 has a 20 L tank [1]."}}
                ],
            }
            handle.write(json.dumps(line) + "\n")


def _timed(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _peak(run: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _baseline(path: Path) -> Callable[[], object]:
    """``json.loads`` of the whole document, or of every line of JSON Lines."""

    def parse() -> object:
        with path.open("rb") as handle:
            if path.suffix == ".jsonl":
                return [json.loads(line) for line in handle]
            return json.loads(handle.read())

    return parse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    met = True
    with tempfile.TemporaryDirectory() as folder:
        message, lines = Path(folder) / "message.json", Path(folder) / "answers.jsonl"
        _anthropic(message, 20_000_000)
        _sonar_lines(lines, 30_000)
        for path, expected, target in ((message, "anthropic", TARGET_RATIO), (lines, "perplexity", 0.01)):

            def detect(path: Path = path) -> str:
                return detect_reader(shape_of_file(path), str(path)).name

            assert detect() == expected
            ours = _timed(detect, args.repeats)
            floor = _timed(_baseline(path), args.repeats)
            ours_peak, floor_peak = _peak(detect), _peak(_baseline(path))
            ratio = ours / floor
            size = path.stat().st_size / 1e6
            print(f"{path.name} ({size:.1f} MB, {expected}):")
            print(f"  detection  median {ours * 1000:9.2f} ms   peak memory {ours_peak / 1e6:8.2f} MB")
            print(f"  json.loads median {floor * 1000:9.2f} ms   peak memory {floor_peak / 1e6:8.2f} MB")
            print(f"  ratio detection / json.loads: {ratio:.4f}x (target <= {target}x; peak <= 2 MB)")
            met = met and ratio <= target and ours_peak <= TARGET_PEAK
    print("met" if met else "not met")


if __name__ == "__main__":
    import machine

    machine.run(main)
