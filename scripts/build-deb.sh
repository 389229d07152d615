#!/usr/bin/env bash
# `make deb`: builds orchard_<version>_<arch>.deb with dpkg-deb from the release binary, staged by the same
# install step as `make install` (PREFIX=/usr, the unit in /lib/systemd/system), plus the maintainer scripts of
# packaging/debian (the orchard system user, the master key on first install, the service enabled where
# systemd runs; purge removes them). The binary links the Swift runtime statically (make release), so the
# package depends only on the Debian libraries it loads, found with dpkg -S.
#   scripts/build-deb.sh [OUTPUT_DIRECTORY]   (default: the project's directory)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$PWD}
bin=${ORCHARD_BIN:-.build/release/orchard}
[[ -x "$bin" ]] || { echo "deb: no $bin (run make release first)" >&2; exit 1; }

version=$(sed -n 's/.*static let number = "\(.*\)".*/\1/p' Sources/OrchardBase/OrchardVersion.swift)
[[ -n "$version" ]] || { echo "deb: cannot read the version from Sources/OrchardBase/OrchardVersion.swift" >&2; exit 1; }
arch=$(dpkg --print-architecture)
commit=$("$bin" --version | sed -n 's/.*(commit \(.*\))$/\1/p')
stage=$(mktemp -d "${TMPDIR:-/tmp}/orchard-deb.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root="$stage/orchard_${version}_$arch"

ORCHARD_BIN="$bin" DESTDIR="$root" PREFIX=/usr SYSCONFDIR=/etc UNITDIR=/lib/systemd/system \
    MANDIR=/usr/share/man DATADIR=/usr/share ./scripts/install.sh >/dev/null
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/orchard"

# The Debian packages of the shared libraries the binary loads (libc, OpenSSL, SQLite, libpq, libcurl, …).
depends=$(ldd "$root/usr/bin/orchard" | awk '/=> \// { print $3 }' | while read -r lib; do
    real=$(readlink -f "$lib")
    dpkg -S "$lib" 2>/dev/null || dpkg -S "$real" 2>/dev/null || true
done | cut -d: -f1 | sort -u | while read -r package; do
    installed=$(dpkg-query -W -f='${Version}' "$package" 2>/dev/null | sed 's/-[^-]*$//')
    printf '%s (>= %s)\n' "$package" "$installed"
done | paste -sd, - | sed 's/,/, /g')
[[ -n "$depends" ]] || { echo "deb: found no library packages for the binary" >&2; exit 1; }

install -d -m 0755 "$root/DEBIAN" "$root/usr/share/doc/orchard"
install -m 0644 packaging/debian/copyright "$root/usr/share/doc/orchard/copyright"
date=$(date -R -u -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")
sed -e "s/@VERSION@/$version/g" -e "s/@COMMIT@/$commit/g" -e "s/@DATE@/$date/g" packaging/debian/changelog.in \
    | gzip -9n >"$root/usr/share/doc/orchard/changelog.gz"
chmod 0644 "$root/usr/share/doc/orchard/changelog.gz"
for script in postinst prerm postrm; do install -m 0755 "packaging/debian/$script" "$root/DEBIAN/$script"; done
find "$root/etc" -type f | sed "s#^$root##" | sort >"$root/DEBIAN/conffiles"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" -e "s/@DEPENDS@/$depends/" \
    packaging/debian/control.in >"$root/DEBIAN/control"
(cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' | sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"
find "$root" -type d -exec chmod 0755 {} +

mkdir -p "$out"
dpkg-deb --root-owner-group --build "$root" "$out/orchard_${version}_$arch.deb" >/dev/null
echo "$out/orchard_${version}_$arch.deb"
