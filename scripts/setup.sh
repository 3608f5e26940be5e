#!/usr/bin/env bash
# Install privkit and everything it needs into ./.venv (idempotent; CPU only).
#
# torch comes first, pinned to the local CPU build 2.13.0 that this machine's pip finds
# offline; constraints.txt keeps every later resolution (opacus's) on that build, so no
# CUDA package is ever downloaded. The install is editable in strict mode: a link tree
# under build/ that mypy can see (the default editable hook hides the mapped packages).
set -euo pipefail
cd "$(dirname "$0")/.."
# pyspark (the `spark` extra, for privkit.algorithms.analytics on Spark) runs on a Java
# runtime (17 or later): install Debian's when there is none.
if ! command -v java >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=$([ "$(id -u)" -eq 0 ] || echo sudo)
        $SUDO apt-get update -qq
        $SUDO apt-get install -y -qq default-jre-headless >/dev/null \
            || $SUDO apt-get install -y -qq openjdk-17-jre-headless >/dev/null
    else
        echo "setup: no java and no apt-get; install a Java 17+ runtime for pyspark" >&2
    fi
fi
# The documentation site's browser test (tests/docs/test_site.py) opens the built site in
# headless Chromium through chromedriver: install Debian's when they are missing.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        SUDO=$([ "$(id -u)" -eq 0 ] || echo sudo)
        $SUDO apt-get update -qq
        $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null \
            || echo "setup: chromium could not be installed; the site's browser test will skip" >&2
    else
        echo "setup: no chromium and no apt-get; the site's browser test will skip" >&2
    fi
fi
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip --quiet --disable-pip-version-check)
"${PIP[@]}" install -c constraints.txt "torch==2.13.0"
"${PIP[@]}" install -c constraints.txt -e ".[all]" --config-settings editable_mode=strict
if .venv/bin/python -m pip list 2>/dev/null | grep -qi '^nvidia-'; then
    echo "setup: CUDA packages were installed; torch must be the local CPU build" >&2
    exit 1
fi
echo "setup: privkit $(.venv/bin/privkit --version | cut -d' ' -f2) installed in .venv"
