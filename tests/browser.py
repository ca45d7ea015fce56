"""The Playwright fixtures of the browser tests (Debian's chromium, sync API), imported by the modules that use them.

Playwright's sync API runs an event loop in the test's own thread, and Django refuses database calls
from a thread with a running loop. The test process may still use the ORM beside the browser (to make
a set, read what a page wrote): :func:`orm_beside_playwright` sets ``DJANGO_ALLOW_ASYNC_UNSAFE`` in this
process only, for as long as the browser is open. Nowhere else: a served process never gets it
(``tests.conftest.service_env`` drops it, ``tests.isolation`` clears it at start), so a blocking
database call in async code fails its test, as it would fail on the site.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from django.db import connections

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ASYNC_UNSAFE = "DJANGO_ALLOW_ASYNC_UNSAFE"


@contextlib.contextmanager
def orm_beside_playwright():
    """``DJANGO_ALLOW_ASYNC_UNSAFE`` set in this test process while the block runs, then unset again."""
    saved = os.environ.get(ASYNC_UNSAFE)
    os.environ[ASYNC_UNSAFE] = "true"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(ASYNC_UNSAFE, None)
        else:
            os.environ[ASYNC_UNSAFE] = saved


@pytest.fixture
def browser():
    from playwright.sync_api import sync_playwright

    with orm_beside_playwright(), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
            # A fixture or test body that touched the ORM while Playwright was running (e.g. a `staff` user
            # created after this fixture) opened a connection in the context Playwright's greenlets set up,
            # which pytest-django never closes: close it here, inside that context, or the test database
            # cannot be dropped at the end of the run ("another session is connected").
            connections.close_all()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.problems = []
    page.on("console", lambda msg: msg.type == "error" and page.problems.append(msg.text))
    page.on("pageerror", lambda exc: page.problems.append(str(exc)))
    yield page
    context.close()
    # The test body's ORM connection lives in a context Playwright's greenlets set up, which
    # pytest-django does not close; close it so the test database can be dropped afterwards.
    connections.close_all()
