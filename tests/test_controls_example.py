"""examples/controls.py: the four-claim fixture built in code prints the reference figures, and the control holds."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO


def test_controls_example_prints_the_reference_figures_and_the_control() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "controls.py")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # Edges: (c1,s1) supported, (c2,s2) conflicting, (c3,s3) unknown; c4 has none → precision 1/3.
    # Facts: f1..f4, only f1's claim c1 has a supported edge → coverage 1/4.
    assert lines.count("  precision 1/3 = 0.333") == 2
    assert lines.count("  coverage  1/4 = 0.250") == 2
    # Once: s1, s2, s3 one location each = 3 locations; twice: one more s1 location = 4, still 3 edges.
    assert "s1 cited once for c1: 3 citation location(s) -> 3 unique edge(s)" in lines
    assert "s1 cited twice for c1 (a duplicated citation): 4 citation location(s) -> 3 unique edge(s)" in lines
    assert lines[-1] == "duplicating s1's citation changes nothing: yes"
