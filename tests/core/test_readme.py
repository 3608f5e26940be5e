"""The README's examples run, and its printed outputs are true."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def python_blocks():
    return re.findall(r"```python\n(.*?)```", README, flags=re.DOTALL)


def test_readme_starts_with_the_two_commands():
    """The README opens with exactly the main-job and the test command."""
    first = re.search(r"```bash\n(.*?)```", README, flags=re.DOTALL).group(1)
    commands = [line.split("#")[0].strip() for line in first.strip().splitlines()]
    assert commands == [
        "bash scripts/setup.sh && .venv/bin/privkit audit",
        "bash scripts/setup.sh && bash scripts/test.sh",
    ]
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci


def test_python_examples_run_in_order():
    """All python blocks, run in one interpreter in order, raise nothing."""
    code = "\n".join(python_blocks())
    assert len(python_blocks()) >= 6
    subprocess.run([sys.executable, "-c", code], check=True, cwd="/", capture_output=True)


def test_printed_tree_is_what_print_gives():
    """The tree shown in the README is the output of the example."""
    shown = re.search(r"prints\n\n```\n(.*?)```", README, flags=re.DOTALL).group(1).strip()
    blocks = python_blocks()
    code = "\n".join(blocks[: blocks.index(next(b for b in blocks if "print(plan)" in b)) + 1])
    out = subprocess.run([sys.executable, "-c", code], check=True, cwd="/",
                         capture_output=True, text=True).stdout
    assert shown in out


def test_commented_values_are_true():
    """Numbers written in comments beside print() calls match what they print."""
    code = "\n".join(python_blocks())
    out = subprocess.run([sys.executable, "-c", code], check=True, cwd="/",
                         capture_output=True, text=True).stdout
    for value in ("4.3772", "4.7284", "0.2876", "4.0", "2.0", "3.7306", "pld 4.564",
                  "lower bound 1.6390 at 95% -> violation"):
        assert value in out, value
