"""The sentinel fuzz (issue 22, "Must show"), core part: plant sentinels in private data,
call every public entry point that takes private data in hostile variants, and find the
sentinels in no exception (its whole chain), warning, logging record, stdout or stderr.

The sentinels (``tests/_transcript.py``): the float 123456.789 (in every usual printed
form), the label ``"SENTINEL-7f3a"`` and the count 1187 (an integer answer, a number of
rows or of cells). Here: every built-in mechanism's ``release`` and ``simulate`` (from
the registry) and ``counts``; ``privkit account`` on plan files; the dataset loaders;
``privkit reproduce`` on a data folder. The estimators and the functions of
``privkit.algorithms`` are fuzzed by ``test_sentinel_estimators.py``. Hostile variants:
NaN and infinities next to the sentinel, huge magnitudes, wrong shapes, empty data,
wrong dtypes, malformed rows.

Mechanisms are held to more than silence about the sentinel: a call either succeeds or
raises ``InvalidParameterError``, and says nothing else at all (no warning, no log line,
no output). Each test collects every problem of its entry point before failing, so a
failure lists them all.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _transcript import (
    SENTINEL_COUNT,
    SENTINEL_FLOAT,
    SENTINEL_LABEL,
    Said,
    capture,
    leaks,
)

from privkit import InvalidParameterError, registered_mechanisms
from privkit.mechanisms import ObjectivePerturbation, counts

# -- mechanisms ------------------------------------------------------------------------

MECHANISMS = sorted(k for k, cls in registered_mechanisms().items()
                    if cls.__module__.startswith("privkit."))


def mechanism_case(kind: str) -> tuple[Any, Any, dict[str, Any]]:
    """A calibrated built-in mechanism, a valid answer of its declared form, options."""
    if kind == "objective_perturbation":
        return ObjectivePerturbation.for_epsilon(1.0, curvature=1.0, n_samples=50,
                                                 regularization=0.1), 3, {}
    worst = registered_mechanisms()[kind].worst_case(epsilon=1.0, delta=1e-5)
    return worst.mechanism, worst.first, worst.options


def planted(template: Any, *entries: Any, dtype: Any = float) -> Any:
    """``template`` (made at least 1-d) with its first entries replaced by ``entries``."""
    x = np.array(template, dtype=dtype, ndmin=1).copy()
    flat = x.reshape(-1)
    if flat.size < len(entries):
        x = np.zeros(len(entries), dtype=dtype)
        flat = x
    for i, e in enumerate(entries):
        flat[i] = e
    return x


def answer_variants(template: Any) -> dict[str, Any]:
    """Hostile answers built on a valid one: the sentinel beside NaN and infinities, huge
    magnitudes, wrong shapes, empty, wrong dtypes, the count sentinel."""
    t = np.array(template)
    return {
        "sentinel": planted(t, SENTINEL_FLOAT),
        "sentinel scalar": SENTINEL_FLOAT,
        "sentinel and NaN": planted(t, SENTINEL_FLOAT, math.nan),
        "sentinel and inf": planted(t, SENTINEL_FLOAT, math.inf),
        "sentinel and -inf": planted(t, -math.inf, SENTINEL_FLOAT),
        "huge": planted(t, SENTINEL_FLOAT * 1e300, -1e308),
        "count": planted(t, SENTINEL_COUNT, dtype=np.int64),
        "count and negative": planted(t, -SENTINEL_COUNT, 2**63 - 1, dtype=np.int64),
        "extra axis": planted(t, SENTINEL_FLOAT)[None, None],
        "ragged": [[SENTINEL_FLOAT], [1.0, 2.0]],
        "empty": np.zeros((0, *t.shape[1:])),
        "empty list": [],
        "count rows": np.full((SENTINEL_COUNT, *t.shape[1:], 1), SENTINEL_FLOAT),
        "string": str(SENTINEL_FLOAT),
        "strings": [str(SENTINEL_FLOAT), SENTINEL_LABEL],
        "label": SENTINEL_LABEL,
        "object": np.array([SENTINEL_FLOAT, None, SENTINEL_LABEL], dtype=object),
        "complex": planted(t, SENTINEL_FLOAT) + 1j,
        "bool": np.ones_like(t, dtype=bool),
        "dict": {"value": SENTINEL_FLOAT},
        "none": None,
    }


def mechanism_problems(call: Callable[[], Any], where: str) -> list[str]:
    """Why ``call`` (a release or simulate) breaks the rules for mechanisms, if it does."""
    said = capture(call, seconds=20.0)
    problems = [f"{where}: {leak}" for leak in leaks(said)]
    if said.error is not None and not isinstance(said.error, InvalidParameterError):
        problems.append(f"{where}: raised {type(said.error).__name__}: {said.error}")
    problems.extend(f"{where}: {channel} {getattr(said, channel)}"
                    for channel in ("warnings", "logs") if getattr(said, channel))
    if said.stdout or said.stderr:
        problems.append(f"{where}: printed {said.stdout + said.stderr!r}")
    return problems


@pytest.mark.parametrize("kind", MECHANISMS)
def test_mechanisms_say_nothing_of_the_private_answer(kind):
    """release and simulate, with one draw and with size=2, on every hostile variant:
    success or InvalidParameterError, with no sentinel and nothing else said."""
    mechanism, template, options = mechanism_case(kind)
    problems = []
    for name, value in answer_variants(template).items():
        for method in ("release", "simulate"):
            for size in (None, 2):
                call = getattr(mechanism, method)
                problems += mechanism_problems(
                    lambda call=call, value=value, size=size: call(value, rng=0, size=size,
                                                                   **options),
                    f"{kind}.{method}({name}, size={size})")
    assert not problems, "\n".join(problems)


def test_counts_says_nothing_of_the_labels():
    """counts on hostile labels: counted, dropped or refused by dtype, silently."""
    problems = []
    for name, value in answer_variants(np.array([0, 1, 1])).items():
        problems += mechanism_problems(lambda value=value: counts(value, 3), f"counts({name})")
    problems += mechanism_problems(lambda: counts([0, 1], SENTINEL_COUNT), "counts(k=1187)")
    assert not problems, "\n".join(problems)


# -- plan files and accountants ---------------------------------------------------------

def cli(*argv: str) -> Said:
    from privkit.cli import main

    return capture(lambda: main(list(argv)), seconds=120.0)


def test_a_failing_plan_file_prints_no_data(tmp_path):
    """Plan parameters are public, but a plan file that fails shows no value it holds
    under a key that is not a parameter, and no text of a file that is not JSON."""
    leaf = {"noise_scale": 2.0, "l1_sensitivity": 1.0}
    documents = {
        "unknown leaf key": {"relation": "add_remove",
                             "plan": {"laplace": {**leaf, "rows": [SENTINEL_FLOAT]}}},
        "unknown top key": {"relation": "add_remove", "plan": {"laplace": leaf},
                            "data": [SENTINEL_FLOAT, SENTINEL_LABEL, SENTINEL_COUNT]},
        "unknown node": {"relation": "add_remove",
                         "plan": {"sequential": [{"laplace": leaf},
                                                 {"mystery": [SENTINEL_FLOAT]}]}},
        "leaf not an object": {"relation": "add_remove", "plan": {"laplace": [SENTINEL_FLOAT]}},
    }
    problems = []
    for name, document in documents.items():
        path = tmp_path / "plan.json"
        path.write_text(json.dumps(document))
        said = cli("account", str(path))
        problems += [f"account ({name}): {leak}" for leak in leaks(said)]
    path = tmp_path / "broken.json"
    path.write_text('{"relation": "add_remove", "plan": ' + f"{SENTINEL_FLOAT} {SENTINEL_LABEL}")
    problems += [f"account (not JSON): {leak}" for leak in leaks(cli("account", str(path)))]
    assert not problems, "\n".join(problems)


# -- dataset loaders and the CLI -------------------------------------------------------

def write_csv(path: Path, header: str, rows: list[str]) -> Path:
    with gzip.open(path, "wt") as handle:
        handle.write(header + "\n" + "\n".join(rows) + "\n")
    return path


def file_variants(n_features: int, n_rows: int = SENTINEL_COUNT + 5,
                  at: int = SENTINEL_COUNT) -> dict[str, list[str]]:
    """Rows of a CSV file (features, then an integer label) with the sentinels planted
    in well-formed and malformed rows; by default the malformed row is data row 1187
    (numpy's count, from 0, after the header)."""
    def row(i: int) -> list[str]:
        return [f"{(i * 7 % 10) / 10:.1f}"] * n_features + [str(i % 2)]

    base = [row(i) for i in range(n_rows)]

    def with_row(at: int, fields: list[str]) -> list[str]:
        rows = [",".join(r) for r in base]
        rows[at] = ",".join(fields)
        return rows

    good = row(0)
    return {
        "sentinel value": with_row(3, [str(SENTINEL_FLOAT), *good[1:]]),
        "sentinel label": with_row(3, [*good[:-1], SENTINEL_LABEL]),
        "sentinel text in a feature": with_row(at, [SENTINEL_LABEL, *good[1:]]),
        "fractional label": with_row(3, [*good[:-1], str(SENTINEL_FLOAT)]),
        "NaN beside the sentinel": with_row(3, ["nan", str(SENTINEL_FLOAT), *good[2:]]),
        "short row": with_row(at, [str(SENTINEL_FLOAT)]),
        "long row": with_row(at, [*good, str(SENTINEL_FLOAT)]),
        "empty": [],
    }


def test_load_csv_says_nothing_of_the_file(tmp_path):
    """load_csv on files with the sentinels in well-formed and malformed rows."""
    from privkit.algorithms import load_csv

    problems = []
    for name, rows in file_variants(3).items():
        path = write_csv(tmp_path / "data.csv.gz", "a,b,c,label", rows)
        problems += [f"load_csv ({name}): {leak}" for leak in leaks(capture(
            lambda path=path: load_csv(path)))]
    assert not problems, "\n".join(problems)


def test_load_adult_says_nothing_of_the_file(tmp_path):
    """load_adult on a folder whose train file holds the sentinels (14 features)."""
    from privkit.algorithms import load_adult
    from privkit.algorithms.datasets import ADULT_COLUMNS

    header = ",".join([*ADULT_COLUMNS, "label"])
    problems = []
    for name, rows in file_variants(14).items():
        write_csv(tmp_path / "adult-train.csv.gz", header, rows)
        write_csv(tmp_path / "adult-test.csv.gz", header, file_variants(14)["sentinel value"])
        problems += [f"load_adult ({name}): {leak}" for leak in leaks(capture(
            lambda: load_adult(tmp_path)))]
    assert not problems, "\n".join(problems)


def test_reproduce_says_nothing_of_the_data_folder(tmp_path):
    """privkit reproduce park2022 on an iris file holding the sentinels, run in-process
    through privkit.cli.main (Figure 7.1's quick grid: three moons and iris, one run)."""
    problems = []
    variants = file_variants(4, n_rows=150, at=100)
    for name in ("sentinel value", "sentinel text in a feature", "short row", "empty"):
        rows = variants[name]
        write_csv(tmp_path / "iris.csv.gz", "a,b,c,d,label", rows)
        said = cli("reproduce", "park2022", "--quick", "--parts", "figure71", "--runs", "1",
                   "--quiet", "--data", str(tmp_path), "--out", str(tmp_path / "out"))
        problems += [f"reproduce ({name}): {leak}" for leak in leaks(said)]
        if name == "sentinel value":  # well formed: the experiment ran and printed its row
            assert said.result == 0, said.error_text or said.stderr
            assert "iris" in said.stdout
    assert not problems, "\n".join(problems)
