#!/usr/bin/env bash
# Lint, type-check and test privkit. Fails if any step fails or if no test ran.
# --dist worksteal: an idle worker takes tests queued on the other (the slow tier ends in
# long transcript audits that the default schedule left on one worker).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="$PWD/.venv/bin"
"$VENV/ruff" check .
# mypy must run from outside the repository root, or ./privkit shadows the installed,
# mapped package and only the core is checked.
(cd /tmp && "$VENV/mypy" -p privkit --config-file "$OLDPWD/pyproject.toml")
# The documentation site, built strictly (a broken link, page or API reference fails it);
# tests/docs/test_site.py opens this build in a browser instead of building it again.
PRIVKIT_SITE_DIR="$(mktemp -d)"
export PRIVKIT_SITE_DIR
NO_MKDOCS_2_WARNING=1 "$VENV/mkdocs" build --strict --quiet --site-dir "$PRIVKIT_SITE_DIR"
# A test that hangs fails after 15 minutes (pytest-timeout) instead of holding CI to its
# limit; the longest test takes well under a minute.
TIMEOUT=(--timeout 900)
log="$(mktemp)"
set +e
"$VENV/pytest" "${TIMEOUT[@]}" -n 2 --dist worksteal tests "$@" \
    | tee "$log"
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
    exit "$status"
fi
if ! grep -Eq '[1-9][0-9]* passed' "$log"; then
    echo "test.sh: no test passed; refusing to report success" >&2
    exit 1
fi
# The numpy paths of the compiled accelerators (as on a machine with no C compiler). CI
# (no arguments) runs the whole not-slow tier on them; an everyday run with a marker
# reruns the tests of their callers (the SVDD solver, random features, equilibrium
# points) and test_kernels.py, which compares the two paths where both exist.
if [ "$#" -eq 0 ]; then
    PRIVKIT_PURE=1 "$VENV/pytest" "${TIMEOUT[@]}" -n 2 --dist worksteal -q -m "not slow" tests
else
    PRIVKIT_PURE=1 "$VENV/pytest" "${TIMEOUT[@]}" -n 2 -q "$@" tests/algorithms/test_kernels.py \
        tests/algorithms/test_svdd.py tests/algorithms/test_random_features.py \
        tests/algorithms/test_equilibrium.py
fi
