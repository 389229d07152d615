#!/usr/bin/env bash
# `make install`: installs the built release binary and what runs it as a service.
#   PREFIX (/usr/local)  BINDIR ($PREFIX/bin)  SYSCONFDIR (/etc)  UNITDIR ($PREFIX/lib/systemd/system)
#   MANDIR ($PREFIX/share/man)  DATADIR ($PREFIX/share)  DOCDIR ($DATADIR/doc/orchard)  DESTDIR (staging root)
#   ORCHARD_BIN (.build/release/orchard)
# Installs: the binary; orchard.service (a hardened unit running as the orchard user); SYSCONFDIR/orchard/
# orchard.conf naming every `orchard serve` setting, commented (kept when it exists: the new one is written
# beside it as orchard.conf.dist); SYSCONFDIR/logrotate.d/orchard; orchard(1) made from --help; the Apple root
# fetch script and the operator docs. It creates no user and no master key: the Debian package's maintainer
# scripts do (see packaging/debian/postinst), or the operator does, as docs/operations.md says.
set -euo pipefail
cd "$(dirname "$0")/.."

PREFIX=${PREFIX:-/usr/local}
BINDIR=${BINDIR:-$PREFIX/bin}
SYSCONFDIR=${SYSCONFDIR:-/etc}
UNITDIR=${UNITDIR:-$PREFIX/lib/systemd/system}
MANDIR=${MANDIR:-$PREFIX/share/man}
DATADIR=${DATADIR:-$PREFIX/share}
DOCDIR=${DOCDIR:-$DATADIR/doc/orchard}
DESTDIR=${DESTDIR:-}
bin=${ORCHARD_BIN:-.build/release/orchard}
[[ -x "$bin" ]] || { echo "install: no $bin (run make release first)" >&2; exit 1; }

install -d "$DESTDIR$BINDIR" "$DESTDIR$UNITDIR" "$DESTDIR$SYSCONFDIR/orchard" "$DESTDIR$SYSCONFDIR/logrotate.d" \
    "$DESTDIR$MANDIR/man1" "$DESTDIR$DATADIR/orchard" "$DESTDIR$DOCDIR"
install -m 0755 "$bin" "$DESTDIR$BINDIR/orchard"

sed -e "s#@BINDIR@#$BINDIR#g" -e "s#@SYSCONFDIR@#$SYSCONFDIR#g" packaging/orchard.service.in \
    >"$DESTDIR$UNITDIR/orchard.service"
chmod 0644 "$DESTDIR$UNITDIR/orchard.service"

conf="$DESTDIR$SYSCONFDIR/orchard/orchard.conf"
target="$conf"
[[ -e "$conf" ]] && target="$conf.dist"
# The service's settings: production on the SQLite file in the state directory, the master key the package
# makes, the Apple root where fetch-apple-root.sh puts it, the access log in the logs directory.
"$bin" config template \
    environment=production \
    database=sqlite:/var/lib/orchard/orchard.db \
    master-key-file="$SYSCONFDIR/orchard/master-key" \
    apple-root=/var/lib/orchard/apple-root-ca-g3.pem \
    access-log=/var/log/orchard/access.log \
    >"$target"
chmod 0644 "$target"
[[ "$target" == "$conf" ]] || echo "install: kept $conf; the new template is $target"

install -m 0644 packaging/orchard.logrotate "$DESTDIR$SYSCONFDIR/logrotate.d/orchard"
scripts/manpage.sh "$bin" | gzip -9n >"$DESTDIR$MANDIR/man1/orchard.1.gz"
chmod 0644 "$DESTDIR$MANDIR/man1/orchard.1.gz"
install -m 0755 scripts/fetch-apple-root.sh "$DESTDIR$DATADIR/orchard/fetch-apple-root.sh"
for doc in README.md docs/operations.md docs/serve.md docs/api.md openapi.yaml; do
    install -m 0644 "$doc" "$DESTDIR$DOCDIR/$(basename "$doc")"
done
echo "installed orchard into ${DESTDIR:-/}${DESTDIR:+ }(PREFIX $PREFIX)"
