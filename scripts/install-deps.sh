#!/usr/bin/env bash
# Installs the C libraries Orchard builds on, when they are missing.
# Idempotent: does nothing when every package is present. Uses sudo only when not root.
set -euo pipefail

DEBIAN_PACKAGES=(pkg-config libssl-dev libsqlite3-dev libpq-dev libcurl4-openssl-dev libmicrohttpd-dev)
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

missing=()
for p in "${DEBIAN_PACKAGES[@]}" "$@"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$p")
done
((${#missing[@]})) || exit 0

sudo=()
if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "Need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
fi
echo "Installing Debian packages: ${missing[*]}"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
