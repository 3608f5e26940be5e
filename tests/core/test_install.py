"""Compiled code is an accelerator, never a requirement (issue 24): the sdist and the wheel
that ``python -m build`` makes install in clean virtual environments, with the compiled
modules where a compiler works and without them (``CC=false``) where none does, and the
command line runs either way. Slow (a build and three environments, a few minutes)."""

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK = ("import privkit.algorithms._accelerators as k; "
         "print(k.COMPILED['hull'], k.COMPILED['rff'])")


def _run(*args, env=None, cwd=None):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True,
                          check=True, env=env, cwd=cwd)


def _environment(folder: Path, package: Path, env=None) -> Path:
    """A new virtual environment in folder with ``package`` (a wheel or an sdist) and
    scikit-learn (which privkit.algorithms needs) installed; its python."""
    venv.create(folder, with_pip=True)
    python = folder / "bin" / "python"
    _run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", package,
         "scikit-learn", env=env)
    return python


@pytest.mark.slow
def test_the_sdist_and_wheel_install_with_and_without_a_compiler(tmp_path):
    """The wheel built from the sdist carries both accelerators, and the environment it
    is installed in uses them; the sdist installed with ``CC=false`` builds neither,
    says so in one line each, and runs on the numpy paths; ``privkit audit`` runs in
    both."""
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler here to build the wheel with")
    pytest.importorskip("build")
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the sources to build are the checkout's files")
    # a copy of the checkout's files: building in place would leave privkit.egg-info and
    # the generated C files in the checkout, which other tests' processes would then see
    source = tmp_path / "source"
    files = _run("git", "ls-files", "--cached", "--others", "--exclude-standard",
                 cwd=ROOT).stdout.splitlines()
    for name in files:
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "build", "--outdir", dist, source)
    (wheel,) = dist.glob("privkit-*.whl")
    (sdist,) = dist.glob("privkit-*.tar.gz")
    env = {k: v for k, v in os.environ.items() if k != "PRIVKIT_PURE"}

    with_compiler = _environment(tmp_path / "wheel", wheel, env)
    assert _run(with_compiler, "-c", CHECK, env=env, cwd=tmp_path).stdout.split() == [
        "True", "True"]
    no_compiler = {**env, "CC": "false"}
    without = tmp_path / "sdist"
    venv.create(without, with_pip=True)
    python = without / "bin" / "python"
    log = _run(python, "-m", "pip", "install", "--verbose", "--disable-pip-version-check",
               sdist, "scikit-learn", env=no_compiler)
    skipped = [line for line in (log.stdout + log.stderr).splitlines()
               if "privkit: not building the optional accelerator" in line]
    assert len(skipped) == 2
    assert _run(python, "-c", CHECK, env=env, cwd=tmp_path).stdout.split() == [
        "False", "False"]
    for folder in (tmp_path / "wheel", without):
        audit = _run(folder / "bin" / "privkit", "audit", "laplace", "--trials", "2000",
                     env=env, cwd=tmp_path)
        assert "laplace" in audit.stdout
        assert "consistent" in audit.stdout
