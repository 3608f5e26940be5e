"""privkit._progress: a bar only when wanted, always closed."""

import io
import sys

import pytest

from privkit import _progress


def test_no_bar_when_stderr_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not _progress.wanted()
    with _progress.progress(3, "rows") as bar:
        bar.update(3)
    assert sys.stderr.getvalue() == ""


def test_quiet_wins_over_a_terminal() -> None:
    assert not _progress.wanted(False)


def test_a_bar_when_asked_is_drawn_and_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tqdm")
    sink = io.StringIO()
    monkeypatch.setattr(sys, "stderr", sink)

    def interrupted() -> None:
        with _progress.progress(2, "rows", enabled=True) as bar:
            bar.update(1)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted()
    assert "rows" in sink.getvalue()
