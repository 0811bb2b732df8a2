#!/bin/bash
# scripts/deb-src-apt.sh DIR: write a private apt configuration under DIR
# (DIR/apt.conf, for APT_CONFIG) whose sources are the machine's own, same
# URIs and suites, with deb-src instead of deb.  No system file is
# modified.  Used by make base (scripts/fetch-base.sh) and make
# rebase-check.  Exits 1 when the machine has no apt source to derive one
# from (the configuration is then written with no sources).
set -euo pipefail
apt=${1:?usage: scripts/deb-src-apt.sh DIR}
mkdir -p "$apt/sources.list.d" "$apt/lists/partial" "$apt/cache/archives/partial"
found=0
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	awk 'BEGIN{RS=""; ORS="\n\n"} /Types:[^\n]*deb/ && !/Enabled: *no/ {
		gsub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f" \
		> "$apt/sources.list.d/$(basename "$f")"
	[ -s "$apt/sources.list.d/$(basename "$f")" ] && found=1
done
if [ -f /etc/apt/sources.list ]; then
	grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
		> "$apt/sources.list.d/from-sources.list" || true
	[ -s "$apt/sources.list.d/from-sources.list" ] && found=1
fi
cat > "$apt/apt.conf" <<CONF
Dir::Etc::SourceList "/dev/null";
Dir::Etc::SourceParts "$apt/sources.list.d";
Dir::State::Lists "$apt/lists";
Dir::Cache "$apt/cache";
APT::Sandbox::User "root";
CONF
[ "$found" = 1 ]
