"""The one pause of the cyclic garbage collector that the report and ingest share (core/collector.py), and what a
command of the console script leaves to the end of its process (cli/common.py)."""

from __future__ import annotations

import gc
import subprocess
import sys

import pytest

from citeaudit.cli.common import left_to_the_end
from citeaudit.core.collector import collector_paused


def test_the_collector_is_off_inside_and_on_again_after() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_inside_still_turns_it_on_again() -> None:
    with pytest.raises(ValueError, match="inside"), collector_paused():
        raise ValueError("inside")
    assert gc.isenabled()


def test_a_collector_already_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the caller turned it off: left as the caller had it
    finally:
        gc.enable()


_LEFT = """
import gc, sys
import citeaudit.cli
from citeaudit.cli.common import left_to_the_end

class Built:
    def __del__(self):
        print("freed", flush=True)

def command():
    built = [Built()]
    left_to_the_end(built)

if sys.argv[1] == "console":
    citeaudit.cli.ENDS_WITH_THE_COMMAND[0] = True  # as main() says
command()
print("returned", flush=True)
gc.collect()
"""


def _left(how: str) -> list[str]:
    ran = subprocess.run([sys.executable, "-c", _LEFT, how], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.split()


def test_what_a_command_of_the_console_script_built_is_left_to_the_end() -> None:
    # never freed: not as the command returns, not by a collection, not as the interpreter ends
    assert _left("console") == ["returned"]


def test_inside_a_longer_lived_program_it_is_freed_as_the_command_returns() -> None:
    assert _left("library") == ["freed", "returned"]


def test_in_this_process_left_to_the_end_keeps_nothing() -> None:
    kept = object()
    before = len(gc.get_referrers(kept))
    left_to_the_end(kept)  # pytest is a longer-lived program: nothing is kept, nothing frozen
    assert len(gc.get_referrers(kept)) == before
    assert gc.get_freeze_count() == 0


def test_the_console_script_says_its_process_ends_with_the_command() -> None:
    script = (
        "import sys\nimport citeaudit.cli\nsys.argv = ['citeaudit', '--help']\n"
        "try:\n    citeaudit.cli.main()\nexcept SystemExit:\n    pass\n"
        "print(citeaudit.cli.ENDS_WITH_THE_COMMAND[0], file=sys.stderr)\n"
    )
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr.split() == ["True"]
