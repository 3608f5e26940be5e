"""Every python example of the documentation site runs, and the generated capability
table is what the estimators give.

Each page's examples run in order in a namespace of their own (a page reads like one
session), from a scratch folder. The pages share one interpreter per group, so that
scikit-learn and torch are imported once; the pages that import torch are a group of
their own, so the two groups run side by side under ``-n 2``. A block preceded by
``<!-- slow -->`` (a Flower deployment, a Spark session) runs only in the slow tier.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"(<!-- slow -->\n)?```python\n(.*?)```", flags=re.DOTALL)

#: Runs each page named in argv in a fresh namespace; prints each failure's traceback
#: under its page's name and exits 1 if any failed.
DRIVER = """
import sys, traceback
from pathlib import Path
failed = 0
for page, code in zip(sys.argv[1::2], sys.argv[2::2]):
    try:
        exec(compile(code, page, "exec"), {"__name__": "__main__"})
    except BaseException:
        failed += 1
        print(f"=== {page}", file=sys.stderr)
        traceback.print_exc()
sys.exit(1 if failed else 0)
"""


def blocks(page: Path) -> list[tuple[bool, str]]:
    """(slow, code) of each python block of ``page``, in order."""
    return [(bool(m.group(1)), m.group(2)) for m in BLOCK.finditer(page.read_text())]


PAGES = sorted(p for p in DOCS.rglob("*.md") if blocks(p))
GROUPS = {
    "torch": [p for p in PAGES if any("import torch" in code for _, code in blocks(p))],
    "others": [p for p in PAGES if not any("import torch" in code for _, code in blocks(p))],
}


def _run(pages: list[Path], cwd: Path, *, slow: bool) -> None:
    argv = []
    for page in pages:
        code = "\n".join(code for is_slow, code in blocks(page) if slow or not is_slow)
        argv += [str(page.relative_to(DOCS)), code]
    done = subprocess.run([sys.executable, "-c", DRIVER, *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_page_examples_run(group: str, tmp_path: Path) -> None:
    """Every page's examples (the slow ones aside) run in order and raise nothing."""
    _run(GROUPS[group], tmp_path, slow=False)


@pytest.mark.slow
def test_slow_examples_run(tmp_path: Path) -> None:
    """The pages with slow examples run whole, the slow ones included."""
    pages = [p for p in PAGES if any(is_slow for is_slow, _ in blocks(p))]
    assert pages
    _run(pages, tmp_path, slow=True)


def test_every_page_of_the_guide_has_examples() -> None:
    """The runs above are not vacuous: every concept and how-to page shows code, and
    both groups hold pages."""
    guides = sorted((DOCS / "how-to").glob("*.md")) + sorted((DOCS / "concepts").glob("*.md"))
    assert len(guides) == 12
    assert all(blocks(page) for page in guides), [p.name for p in guides if not blocks(p)]
    assert all(GROUPS.values())


@pytest.mark.slow
def test_capability_table_is_generated_from_the_estimators() -> None:
    """docs/capabilities.md is exactly what scripts/capabilities.py probes today (slow:
    about a hundred small fits, 10-40 s)."""
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "capabilities.py"),
                           "--check"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
