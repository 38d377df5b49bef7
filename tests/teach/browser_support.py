"""Debian's Chromium driven by Selenium, for the tests that open dmltile's pages in a real browser.

Tests importing this are skipped, with the reason, when selenium, chromium or chromedriver is missing
(`make browser` installs them)."""

from __future__ import annotations

import shutil

import pytest

webdriver = pytest.importorskip(
    "selenium.webdriver", reason="selenium is not installed (pip install -e '.[browser]')"
)
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
DRIVER = shutil.which("chromedriver")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="chromium and chromedriver are needed (`make browser` installs Debian's chromium and chromium-driver)",
)


def headless_chromium(width: int, height: int):
    """A headless Chromium of that window size (the caller quits it)."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-proxy-server",  # the pages are local: never go through a proxy
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    return webdriver.Chrome(options=options, service=Service(DRIVER))


__all__ = [
    "CHROMIUM",
    "DRIVER",
    "ActionChains",
    "By",
    "Select",
    "WebDriverWait",
    "headless_chromium",
    "needs_chromium",
]
