#!/usr/bin/env bash
# Installs the C libraries Orchard builds on, when they are missing.
#   scripts/install-deps.sh          what `make run` needs
#   scripts/install-deps.sh --test   and what the tests need: a PostgreSQL 15 server, headless Chromium
#                                    with its driver, lintian and systemd-analyze for the package, and the
#                                    Python packages selenium and schemathesis
# Idempotent: does nothing when every package is present. Uses sudo only when not root.
set -euo pipefail

DEBIAN_PACKAGES=(pkg-config libssl-dev libsqlite3-dev libpq-dev libcurl4-openssl-dev libmicrohttpd-dev)
TEST_DEBIAN_PACKAGES=(postgresql-15 chromium chromium-driver python3 python3-pip openssl lintian systemd adduser nginx-light)
# tappay is TapPay's published client, run unchanged against orchard serve (Tests/Browser/test_tappay_client.py);
# pinned, since the test checks the wire behaviour of that version.
TEST_PYTHON_PACKAGES=(selenium schemathesis pytest tappay==0.7.3)
# The Python module each of TEST_PYTHON_PACKAGES installs.
TEST_PYTHON_MODULES=(selenium schemathesis pytest tappay)

tests=0
if [[ "${1:-}" == "--test" ]]; then
    tests=1
    shift
fi
BREW_PACKAGES=(pkg-config openssl@3 sqlite libpq curl libmicrohttpd)

if [[ "$(uname -s)" == "Darwin" ]]; then
    missing=()
    for p in "${BREW_PACKAGES[@]}"; do brew list --versions "$p" >/dev/null 2>&1 || missing+=("$p"); done
    if ((${#missing[@]})); then
        echo "Orchard needs these Homebrew packages: ${missing[*]}" >&2
        echo "  brew install ${BREW_PACKAGES[*]}" >&2
        exit 1
    fi
    exit 0
fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "This system has no apt-get. Install the development packages of OpenSSL 3, SQLite 3," >&2
    echo "libpq, libcurl and libmicrohttpd, plus pkg-config, with your package manager." >&2
    echo "On Debian/Ubuntu: apt-get install ${DEBIAN_PACKAGES[*]}" >&2
    echo "On macOS:         brew install ${BREW_PACKAGES[*]}" >&2
    exit 1
fi

wanted=("${DEBIAN_PACKAGES[@]}" "$@")
((tests)) && wanted+=("${TEST_DEBIAN_PACKAGES[@]}")
missing=()
for p in "${wanted[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
# A PostgreSQL server installed by other means (any version) will do for the tests.
if ((tests)) && [[ " ${missing[*]} " == *" postgresql-15 "* ]] && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    missing=("${missing[@]/postgresql-15/}")
fi
# A python3 that is not Debian's (python3 on the PATH with pip) will do too.
if ((tests)) && command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; then
    missing=("${missing[@]/python3-pip/}")
    missing=("${missing[@]/python3/}")
fi
read -r -a missing <<<"${missing[*]}"

if ((${#missing[@]})); then
    sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null 2>&1 || { echo "Need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
        sudo=(sudo)
    fi
    echo "Installing Debian packages: ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

((tests)) || exit 0
python_missing=()
for i in "${!TEST_PYTHON_PACKAGES[@]}"; do
    python3 -c "import ${TEST_PYTHON_MODULES[$i]}" >/dev/null 2>&1 || python_missing+=("${TEST_PYTHON_PACKAGES[$i]}")
done
((${#python_missing[@]})) || exit 0
echo "Installing Python packages: ${python_missing[*]}"
python3 -m pip install --quiet --disable-pip-version-check "${python_missing[@]}" 2>/dev/null \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "${python_missing[@]}"
