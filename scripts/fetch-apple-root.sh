#!/usr/bin/env bash
# Fetches Apple Root CA - G3 from Apple's certificate authority page into Orchard's data directory,
# refusing any file whose SHA-256 fingerprint is not the pinned one. Best effort: without a network it
# prints a warning and exits 0, so builds and tests never depend on it.
#
#   scripts/fetch-apple-root.sh [DESTINATION]
#
# DESTINATION defaults to $ORCHARD_APPLE_ROOT, else $ORCHARD_DATA_DIR/apple-root-ca-g3.pem, else
# ~/.local/share/orchard/apple-root-ca-g3.pem (the path `orchard token` reads by default).
set -euo pipefail

PINNED="63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179"
URL="https://www.apple.com/certificateauthority/AppleRootCA-G3.cer"
DATA_DIR="${ORCHARD_DATA_DIR:-$HOME/.local/share/orchard}"
DEST="${1:-${ORCHARD_APPLE_ROOT:-$DATA_DIR/apple-root-ca-g3.pem}}"

fingerprint() {
    openssl x509 -in "$1" -inform "$2" -noout -fingerprint -sha256 | sed 's/.*=//; s/://g' | tr 'a-f' 'A-F'
}

if [[ -f "$DEST" ]]; then
    if [[ "$(fingerprint "$DEST" PEM 2>/dev/null || true)" == "$PINNED" ]]; then
        echo "Apple Root CA - G3 already at $DEST"
        exit 0
    fi
    echo "error: $DEST exists but is not Apple Root CA - G3 (SHA-256 $PINNED); remove it first" >&2
    exit 1
fi

tmp="$(mktemp)"
trap 'rm -f "$tmp" "$tmp.pem"' EXIT
if ! curl --fail --silent --show-error --location --max-time 30 --proto '=https' --output "$tmp" "$URL"; then
    echo "warning: could not download $URL; place Apple Root CA - G3 at $DEST yourself" >&2
    exit 0
fi
if ! openssl x509 -in "$tmp" -inform DER -out "$tmp.pem" 2>/dev/null; then
    echo "error: the download is not a DER certificate; refusing it" >&2
    exit 1
fi
got="$(fingerprint "$tmp.pem" PEM)"
if [[ "$got" != "$PINNED" ]]; then
    echo "error: downloaded certificate has SHA-256 $got, not Apple Root CA - G3's $PINNED; refusing it" >&2
    exit 1
fi
mkdir -p "$(dirname "$DEST")"
install -m 0644 "$tmp.pem" "$DEST"
echo "Apple Root CA - G3 (SHA-256 $PINNED) saved to $DEST"
