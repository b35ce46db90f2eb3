"""Shared fixtures: real SQLite files in tmp_path, the bundled examples, a CLI runner."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from tests.site import Site, start_site
from typer.testing import CliRunner, Result

from citeaudit.cli import app

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
EXAMPLES = Path(str(resources.files("citeaudit").joinpath("examples")))


@pytest.fixture
def site() -> Iterator[str]:
    """Base URL of a fresh test site on 127.0.0.1 (hits and log reset), shut down after the test."""
    server, thread = start_site()
    yield f"http://site.test:{Site.port}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture
def four_claim_path() -> Path:
    """The bundled four-claim fixture (run kind: fixture)."""
    return EXAMPLES / "four-claim.audit.json"


@pytest.fixture
def exporter_path() -> Path:
    """The bundled synthetic exporter audit."""
    return EXAMPLES / "exporter.audit.json"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A database file path that does not exist yet."""
    return tmp_path / "audit.db"


@pytest.fixture
def write_json(tmp_path: Path) -> Callable[[Any, str], Path]:
    """Write a JSON document to a file in tmp_path and return its path."""

    def write(document: Any, name: str = "audit.json") -> Path:
        path = tmp_path / name
        path.write_text(json.dumps(document), encoding="utf-8")
        return path

    return write


@pytest.fixture
def cli() -> Callable[..., Result]:
    """Invoke the real CLI in-process; stdout and stderr are kept apart."""
    runner = CliRunner()

    def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
        return runner.invoke(app, [str(a) for a in args], env=env, catch_exceptions=False)

    return invoke


def chromium_path() -> str:
    """Debian's Chromium binary; in CI a missing browser fails the run instead of skipping the test."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail("Chromium is not installed: .ci/run installs Debian's chromium; browser tests never skip in CI")
    pytest.skip("Chromium is not installed (apt-get install chromium); CI installs it")


@pytest.fixture
def browser() -> Iterator[Any]:
    """A headless Debian Chromium (Playwright), closed after the test; its pages and contexts are the test's."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=executable, args=["--no-sandbox"], headless=True)
        yield launched
        launched.close()
