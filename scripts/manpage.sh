#!/usr/bin/env bash
# Writes orchard(1), in roff, from the built binary's own help: `orchard help` for the commands and
# `orchard serve --help` for every setting, so the man page says exactly what --help says.
#   scripts/manpage.sh [BIN] > orchard.1
set -euo pipefail
bin=${1:-.build/release/orchard}

# roff text: backslashes doubled, hyphens escaped, a leading dot or quote protected.
roff() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

version=$("$bin" --version | sed 's/^orchard //')
cat <<HEAD
.TH ORCHARD 1 "" "orchard $version" "Orchard"
.SH NAME
orchard \\- Apple Pay gateway that a merchant runs on its own machines
.SH SYNOPSIS
.B orchard
.I command
.RI [ options ]
.br
.B orchard serve
.RB [ \\-\\-config
.IR FILE ]
.RI [ settings ]
.SH DESCRIPTION
Orchard verifies and decrypts Apple Pay payment tokens, turns them into one\\-time primes or order payments,
charges them through a processor and reports the results with signed webhooks.
.B orchard serve
runs the gateway's HTTP API; the other commands manage merchants, keys, tokens and the database.
Each command prints its own usage with
.BR \\-\\-help .
.SH COMMANDS
HEAD
"$bin" help | sed -n '/^commands:/,$p' | tail -n +2 | while read -r name summary; do
    [[ -n "$name" ]] || continue
    printf '.TP\n.B %s\n%s\n' "$(printf '%s' "$name" | roff)" "$(printf '%s' "$summary" | roff)"
done
cat <<'MID'
.SH SERVE SETTINGS
Every setting of
.B orchard serve
is known as a flag, as an
.B ORCHARD_
environment variable and as a config file key. A flag beats an environment variable, which beats the
config file, which beats the default.
MID
"$bin" serve --help | sed -n '/^settings:/,$p' | tail -n +2 | while IFS= read -r line; do
    [[ -n "$line" ]] || continue
    flag=$(printf '%s' "$line" | sed -E 's/^ +(--[a-z0-9-]+( [A-Z.,…]+)?) +.*/\1/')
    rest=$(printf '%s' "$line" | sed -E 's/^ +--[a-z0-9-]+( [A-Z.,…]+)? +//')
    printf '.TP\n.B %s\n%s\n' "$(printf '%s' "$flag" | roff)" "$(printf '%s' "$rest" | roff)"
done
cat <<'TAIL'
.SH FILES
.TP
.I /etc/orchard/orchard.conf
the settings of the packaged service, every one named and commented
.TP
.I /etc/orchard/master\-key
the master key sealing keys and secrets at rest (mode 600)
.TP
.I /var/lib/orchard
the SQLite database, its write\-ahead log and the Apple root certificate
.TP
.I /var/log/orchard
the access log, reopened on SIGHUP
.SH SIGNALS
SIGTERM and SIGINT stop the gateway gracefully; SIGHUP reopens the access log file.
.SH SEE ALSO
.BR systemctl (1),
.BR logrotate (8);
the operations guide in
.IR /usr/share/doc/orchard/operations.md .
TAIL
