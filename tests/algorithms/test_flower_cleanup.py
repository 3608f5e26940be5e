"""A Flower deployment's folder (it holds the participants' rows) does not outlive the
fit: deleted on SIGTERM, and a folder left by a killed process is deleted at the next
start (only owner-only folders of this user whose process is gone)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from privkit.algorithms.federated import _flower_processes as fp

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="Linux /proc")


def _folder(root: Path, name: str, owner: str | None, mode: int = 0o700) -> Path:
    path = root / f"{fp.PREFIX}{name}"
    path.mkdir()
    (path / "rows.npy").write_bytes(b"private")
    if owner is not None:
        (path / fp.OWNER).write_text(owner)
    path.chmod(mode)
    return path


def test_only_owner_only_folders_of_gone_processes_are_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()  # reaped: its id names no process now
    me = f"{os.getpid()} {fp._started(os.getpid())}"
    stale = _folder(tmp_path, "stale", f"{ended.pid} 1")
    reused = _folder(tmp_path, "reused", f"{os.getpid()} 1")  # same id, other start time
    running = _folder(tmp_path, "running", me)
    shared = _folder(tmp_path, "shared", f"{ended.pid} 1", mode=0o755)
    anonymous = _folder(tmp_path, "anonymous", None)
    with fp.Deployment(n_nodes=1, timeout=5.0) as deployment:
        mine = deployment.folder
        assert mine.parent == tmp_path
        assert (mine / fp.OWNER).read_text() == me
        assert not stale.exists()
        assert not reused.exists()
        for kept in (running, shared, anonymous):
            assert (kept / "rows.npy").exists()
    assert not mine.exists()


def test_sigterm_during_a_deployment_removes_its_folder(tmp_path):
    script = ("import time\n"
              "from privkit.algorithms.federated._flower_processes import Deployment\n"
              "with Deployment(n_nodes=1, timeout=60.0) as d:\n"
              "    (d.folder / 'rows.npy').write_bytes(b'private')\n"
              "    print(d.folder, flush=True)\n"
              "    time.sleep(60)\n")
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                             env=env, text=True)
    assert child.stdout is not None
    folder = Path(child.stdout.readline().strip())
    assert (folder / "rows.npy").exists()
    child.send_signal(signal.SIGTERM)
    assert child.wait(timeout=30) == 128 + signal.SIGTERM
    assert not folder.exists()
    assert list(tmp_path.iterdir()) == []


def test_the_callers_own_sigterm_handler_is_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def handler(signum, frame):  # pragma: no cover (never called)
        pass

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        with fp.Deployment(n_nodes=1, timeout=5.0):
            assert signal.getsignal(signal.SIGTERM) is handler
        assert signal.getsignal(signal.SIGTERM) is handler
    finally:
        signal.signal(signal.SIGTERM, previous)
