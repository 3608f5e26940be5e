"""The processes of a local Flower deployment, started and ended by privkit: a SuperLink,
SuperNodes, and runs submitted by Flower's CLI (``flower-superlink``,
``flower-supernode``, ``flwr run``; flwr >= 1.42), on 127.0.0.1.

:class:`Deployment` is a context manager: it owns a private temporary folder (the
Flower home, the app, the participants' state files, the logs) and every process it
starts. On exit, also after an error or an interruption, it ends each process it started
with its whole tree (the SuperExec each one starts, and the ServerApp and ClientApp
processes those start), SIGTERM first and SIGKILL after a grace period, waits until they
are gone, and deletes the folder. The caller's process starts no thread.

The folder holds the participants' rows, so it must not outlive the fit. A SIGTERM to
the caller during the deployment (when it arrives in the main thread and no handler of
the caller's is set) ends the deployment as an interruption does, then exits with
status 143. A caller killed with SIGKILL leaves its folder behind: the next
:class:`Deployment` deletes every such folder, owner-only, of this user, whose owner file
names a process that is gone (:func:`remove_stale`).

.. versionadded:: 0.3.0
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

__all__ = ["Deployment", "alive", "process_tree", "remove_stale", "write_atomically"]

HOST = "127.0.0.1"
#: A deployment's folder in the temporary directory, and the file in it that names the
#: process that made it (``pid start-time``).
PREFIX = "privkit-flower-"
OWNER = "owner"
#: Seconds a process gets to end after SIGTERM before SIGKILL.
GRACE = 5.0


def write_atomically(path: Path, data: bytes | Callable[[IO[bytes]], Any]) -> None:
    """Write ``data`` (bytes, or a function that writes to a binary file) to ``path``
    through a temporary file renamed over it, so a reader sees all of it or nothing."""
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as f:
        if isinstance(data, bytes):
            f.write(data)
        else:
            data(f)
    os.replace(partial, path)


def _children() -> dict[int, list[int]]:
    """Every process's children, from ``/proc`` (empty where there is none)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*/stat") if Path("/proc").is_dir() else []:
        try:
            fields = entry.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended meanwhile
        children.setdefault(int(fields[1]), []).append(int(entry.parent.name))
    return children


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux ``/proc``; elsewhere ``pid`` alone)."""
    children, tree, i = _children(), [pid], 0
    while i < len(tree):
        tree.extend(children.get(tree[i], []))
        i += 1
    return tree


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return not Path("/proc").is_dir()


def _started(pid: int) -> str | None:
    """``pid``'s start time (clock ticks since boot, Linux ``/proc``), which tells it from
    a later process with the same id; None when no process ``pid`` runs."""
    if not alive(pid):
        return None
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return "?"  # no /proc: alive, start time unknown


def remove_stale() -> list[Path]:
    """Delete the deployment folders left behind by processes that are gone (a caller
    killed with SIGKILL runs no cleanup): folders ``privkit-flower-*`` in the temporary
    directory, owned by this user and by no one else (mode ``0o700``, as ``mkdtemp`` makes
    them), whose owner file names a process that no longer runs. Anything else (another
    user's folder, one without an owner file, one whose process runs) is left alone.
    Returns the folders deleted."""
    removed = []
    for path in Path(tempfile.gettempdir()).glob(PREFIX + "*"):
        try:
            info = path.lstat()
            if (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid()
                    or info.st_mode & 0o077):
                continue
            pid, started = (path / OWNER).read_text().split()
            if _started(int(pid)) in (started, "?"):
                continue  # its process still runs
        except (OSError, ValueError):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _terminated(signum: int, frame: Any) -> None:
    """SIGTERM during a deployment: unwind (the ``with`` ends it), then exit 143."""
    raise SystemExit(128 + signum)


def _die_with_parent() -> None:
    """In a started process, before it runs (Linux): SIGTERM it when its parent dies, so a
    caller killed outright (SIGTERM, SIGKILL: no ``finally`` runs) leaves no SuperLink or
    SuperNode behind; each ends its own SuperExec, which ends its apps."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


class Deployment:
    """A SuperLink and ``n_nodes`` SuperNodes on 127.0.0.1 (see the module docstring);
    ``timeout`` bounds the whole run in seconds."""

    def __init__(self, *, n_nodes: int, timeout: float) -> None:
        self.n_nodes = n_nodes
        self.timeout = timeout
        self.ports: list[int] = []
        self._processes: list[tuple[str, subprocess.Popen[bytes], IO[bytes]]] = []
        self._bin = Path(sys.executable).parent
        self._watched: list[str] = []  # the processes the run needs

    def __enter__(self) -> Deployment:
        remove_stale()
        self.folder = Path(tempfile.mkdtemp(prefix=PREFIX))
        write_atomically(self.folder / OWNER,
                         f"{os.getpid()} {_started(os.getpid())}".encode())
        self._previous: Any = None
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL):
            self._previous = signal.signal(signal.SIGTERM, _terminated)
        self.deadline = time.monotonic() + self.timeout
        self.env = {**os.environ, "FLWR_HOME": str(self.folder / "home"),
                    "FLWR_DISABLE_UPDATE_CHECK": "1",
                    "FLWR_TELEMETRY_ENABLED": os.environ.get("FLWR_TELEMETRY_ENABLED", "0"),
                    "PATH": os.pathsep.join([str(self._bin), os.environ.get("PATH", "")])}
        (self.folder / "home").mkdir()
        (self.folder / "logs").mkdir()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
            if self._previous is not None:
                signal.signal(signal.SIGTERM, self._previous)

    def _spawn(self, name: str, command: Sequence[str]) -> subprocess.Popen[bytes]:
        log = open(self.folder / "logs" / f"{name}.log", "wb")  # noqa: SIM115 (closed in stop)
        process = subprocess.Popen([str(self._bin / command[0]), *command[1:]], env=self.env,
                                   stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True,
                                   preexec_fn=_die_with_parent)
        self._processes.append((name, process, log))
        return process

    def _log_tail(self, name: str, lines: int = 5) -> str:
        path = self.folder / "logs" / f"{name}.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return " | ".join(line.strip() for line in text.splitlines()[-lines:])

    def _healthy(self, port: int, process: subprocess.Popen[bytes]) -> bool:
        """Wait until the SuperLink answers on ``port``; False if it exits first."""
        while process.poll() is None:
            try:
                with urllib.request.urlopen(f"http://{HOST}:{port}/health", timeout=1):
                    return True
            except OSError:
                if time.monotonic() > self.deadline:
                    raise RuntimeError(f"Flower's SuperLink did not answer within "
                                       f"{self.timeout:g} s") from None
                time.sleep(0.05)
        return False

    def start(self, node_configs: Sequence[str], *, pythonpath: Sequence[str]) -> None:
        """Start the SuperLink (a new free port if the first is taken meanwhile), then one
        SuperNode per node config (``key="value"`` pairs, Flower's ``--node-config``);
        their processes import from ``pythonpath`` too."""
        self.env["PYTHONPATH"] = os.pathsep.join([*pythonpath,
                                                  self.env.get("PYTHONPATH", "")])
        for attempt in range(3):
            port = _free_port()
            superlink = self._spawn(f"superlink-{attempt}", [
                "flower-superlink", "--insecure", "--host", HOST, "--port", str(port),
                "--disable-runtime-dependency-installation"])
            if self._healthy(port, superlink):
                break
        else:
            raise RuntimeError("Flower's SuperLink did not start on 127.0.0.1 (three "
                               f"attempts): {self._log_tail('superlink-2')}")
        self.ports = [port]
        self._watched = [f"superlink-{attempt}"]
        self.superlink = f"{HOST}:{port}"
        for i, config in enumerate(node_configs):
            self.ports.append(_free_port())
            self._watched.append(f"supernode-{i}")
            self._spawn(f"supernode-{i}", [
                "flower-supernode", "--insecure", "--superlink", self.superlink,
                "--port", str(self.ports[-1]), "--node-config", config])

    def submit(self, app: Path, run_config: dict[str, Any]) -> None:
        """Submit the Flower App in folder ``app`` with ``run_config`` overrides (values
        as TOML) through Flower's CLI (``flwr run``)."""
        (self.folder / "home" / "config.toml").write_text(
            f'[superlink]\ndefault = "local"\n\n[superlink.local]\n'
            f'address = "{self.superlink}"\ninsecure = true\n')
        overrides = " ".join(f"{k}={v}" for k, v in run_config.items())
        try:
            done = subprocess.run(
                [str(self._bin / "flwr"), "run", str(app), "local", "--run-config",
                 overrides, "--format", "json"], env=self.env, stdin=subprocess.DEVNULL,
                capture_output=True, timeout=max(1.0, self.deadline - time.monotonic()),
                check=False)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"`flwr run` did not return within {self.timeout:g} s"
                               ) from None
        try:
            answer = json.loads(done.stdout)
        except ValueError:
            answer = {}
        if done.returncode != 0 or not answer.get("success"):
            tail = str(answer.get("error-message") or (done.stdout + done.stderr).decode(
                errors="replace")).strip()
            raise RuntimeError(f"`flwr run` failed ({done.returncode}): {tail[-500:]}")

    def wait_for(self, path: Path) -> None:
        """Wait until ``path`` exists; a process that exits meanwhile, or the deadline,
        ends the wait with a ``RuntimeError`` that names the process."""
        while not path.exists():
            for name, process, _ in self._processes:
                if name in self._watched and process.poll() is not None:
                    raise RuntimeError(f"Flower's {name} exited ({process.returncode}) "
                                       f"during the run: {self._log_tail(name)}")
            if time.monotonic() > self.deadline:
                raise RuntimeError(f"the Flower run did not finish within {self.timeout:g} s")
            time.sleep(0.05)

    def stop(self) -> None:
        """End every process started, with its tree: SIGTERM, then SIGKILL after
        :data:`GRACE` seconds; wait until all are gone (SuperNodes first)."""
        started = list(reversed(self._processes))
        trees = {process.pid: process_tree(process.pid) for _, process, _ in started}
        for _, process, _ in started:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        end = time.monotonic() + GRACE
        every = [pid for tree in trees.values() for pid in tree]
        while any(alive(pid) for pid in every) and time.monotonic() < end:
            for _, process, _ in started:
                process.poll()
            every = [pid for tree in trees.values() for pid in process_tree_all(tree)]
            time.sleep(0.05)
        for pid in every:
            if alive(pid):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        for _, process, log in started:
            process.wait()
            log.close()
        end = time.monotonic() + GRACE
        while any(alive(pid) for pid in every) and time.monotonic() < end:
            time.sleep(0.02)
        self._processes.clear()


def process_tree_all(pids: Sequence[int]) -> list[int]:
    """``pids`` and the descendants of those still running."""
    out = list(pids)
    for pid in pids:
        if alive(pid):
            out.extend(p for p in process_tree(pid) if p not in out)
    return out
