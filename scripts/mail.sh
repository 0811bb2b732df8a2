#!/bin/bash
# make mail: the series as a mail-ready patch set under build/mail/, with the
# cover letter as patch 0 and the sender's own Signed-off-by added to every
# patch (the sender is git config user.name/user.email, or the project
# identity from the Makefile).  Send with: git send-email build/mail/*.patch
set -euo pipefail
: "${TOP:?}" "${BUILD:?}" "${AUTHOR:?}"
out=$BUILD/mail
rm -rf "$out"
mkdir -p "$out"
mapfile -t patches < <("$TOP/scripts/series-list.sh")
n=${#patches[@]}
[ "$n" -gt 0 ] || { echo "mail: the series is empty" >&2; exit 1; }
sob="Signed-off-by: $AUTHOR"
subject=$(sed -n 's/^Subject: //p' "$TOP/cover-letter.txt" | head -1)
{
	echo "From: $AUTHOR"
	echo "Subject: [PATCH 00/$(printf '%02d' "$n")] ${subject:-synchronous I/O series}"
	echo
	sed '1,/^$/d' "$TOP/cover-letter.txt"
} > "$out/0000-cover-letter.patch"
i=0
for p in "${patches[@]}"; do
	i=$((i + 1))
	f=$out/$p
	# Number the subject and add the sender's Signed-off-by after the last
	# trailer if it is not there yet.
	awk -v sob="$sob" -v tag="[PATCH $(printf '%02d/%02d' "$i" "$n")]" '
		!done_subj && /^Subject: / {
			sub(/^Subject: (\[[^]]*\] )?/, "Subject: " tag " "); done_subj = 1
		}
		/^Signed-off-by: / { if ($0 == sob) have = 1 }
		/^---$/ && !sep { if (!have) print sob; sep = 1 }
		{ print }' "$TOP/patches/$p" > "$f"
done
echo "mail: $((n + 1)) files in $out (cover letter + $n patches), signed off by $AUTHOR"
echo "mail: send with: git send-email --to=<list> $out/*.patch"
