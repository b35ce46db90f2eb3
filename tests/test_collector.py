"""The one pause of the cyclic garbage collector that the report and ingest share (core/collector.py)."""

from __future__ import annotations

import gc

import pytest

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
