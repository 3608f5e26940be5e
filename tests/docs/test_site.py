"""The documentation site builds strictly, and renders and searches in a browser.

The browser test builds the site, serves it on localhost and opens it in headless
Chromium (Debian's ``chromium`` and ``chromium-driver``, installed by scripts/setup.sh)
through selenium: the home page and an API page render, and the search finds an
estimator. It skips when chromium, chromedriver or selenium is absent. With
``PRIVKIT_SITE_SCREENSHOTS=DIR`` it saves ``site_home.png`` and ``site_api.png`` there.
"""

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MKDOCS = [sys.executable, "-m", "mkdocs"]


def _build(site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MKDOCS, "build", "--strict", "--site-dir", str(site)],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site: scripts/test.sh's strict build (``PRIVKIT_SITE_DIR``), else a
    fresh strict build."""
    built_by_test_sh = os.environ.get("PRIVKIT_SITE_DIR")
    if built_by_test_sh and (Path(built_by_test_sh) / "index.html").is_file():
        return Path(built_by_test_sh)
    pytest.importorskip("mkdocs")
    out = tmp_path_factory.mktemp("site")
    built = _build(out)
    assert built.returncode == 0, built.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    class Files(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # no request log in the test output
            pass

    class Quiet(http.server.ThreadingHTTPServer):
        def handle_error(self, request, client_address):  # the browser hangs up: fine
            pass

    server = Quiet(("127.0.0.1", 0), functools.partial(Files, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.skip("chromium and chromedriver are not installed (Debian: chromium, "
                    "chromium-driver; scripts/setup.sh installs them)")
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                 "--disable-gpu", "--window-size=1280,900"):
        options.add_argument(flag)
    from selenium.webdriver.chrome.service import Service

    chrome = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    try:
        yield chrome
    finally:
        chrome.quit()


def _screenshot(browser: object, name: str) -> None:
    folder = os.environ.get("PRIVKIT_SITE_SCREENSHOTS")
    if folder:
        browser.save_screenshot(str(Path(folder) / name))  # type: ignore[attr-defined]


def test_the_site_builds_strictly_with_every_page(site: Path) -> None:
    """A strict build (a broken link or reference fails it) writes every page, the
    search index and the API reference with the estimators in it."""
    for page in ("index.html", "getting-started/index.html", "capabilities/index.html",
                 "reference/algorithms/index.html", "how-to/dp-sgd/index.html",
                 "search/search_index.json"):
        assert (site / page).is_file(), page
    api = (site / "reference/algorithms/index.html").read_text()
    assert 'id="privkit.algorithms.DPKMeans"' in api
    assert "DPKMeans" in (site / "search/search_index.json").read_text()


@pytest.mark.slow
def test_pages_render_and_search_finds_an_estimator(served: str, browser: object) -> None:
    """Home and API pages render in Chromium, and searching "DPKMeans" lists its API
    entry."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    chrome: object = browser
    wait = WebDriverWait(chrome, 30)
    chrome.get(served + "/")  # type: ignore[attr-defined]
    wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "article h1")))
    assert chrome.find_element(By.CSS_SELECTOR, "article h1").text == "privkit"  # type: ignore[attr-defined]
    assert chrome.find_elements(By.CSS_SELECTOR, "nav.md-nav")  # type: ignore[attr-defined]
    _screenshot(chrome, "site_home.png")

    box = wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, "input.md-search__input")))
    box.click()
    box.send_keys("DPKMeans")
    wait.until(lambda d: any("reference/algorithms" in (a.get_attribute("href") or "")
                             for a in d.find_elements(By.CSS_SELECTOR,
                                                      ".md-search-result__link")))

    chrome.get(served + "/reference/algorithms/#privkit.algorithms.DPKMeans")  # type: ignore[attr-defined]
    heading = wait.until(ec.presence_of_element_located(
        (By.ID, "privkit.algorithms.DPKMeans")))
    assert "DPKMeans" in heading.text
    assert chrome.find_elements(By.CSS_SELECTOR, ".doc-signature, .doc-contents")  # type: ignore[attr-defined]
    _screenshot(chrome, "site_api.png")
