#!/bin/bash
# make mail [V=n]: the series as a threaded, mail-ready patch set under
# build/mail/: 0000-cover-letter.patch plus one numbered file per patch, and
# series.mbox (all of them, in order: what b4 am -m and git am take).
#
# Each mail gets
#   - Subject: [PATCH k/N] (or [PATCH vN k/N] with V=n, n > 1);
#   - the sender's Signed-off-by once, after the patch's own trailers (the
#     sender is git config user.name/user.email, or the project identity of
#     the Makefile: $AUTHOR);
#   - To: (maintainers) and Cc: (lists, reviewers) from the base tree's
#     scripts/get_maintainer.pl, run offline (--no-git --no-git-fallback
#     --norolestats) on the patch file; the cover letter gets the union;
#   - Message-Id:, and In-Reply-To:/References: naming the cover letter
#     (shallow threading, as git format-patch --thread=shallow writes it).
# The cover letter ends with the base-commit: trailer that git format-patch
# --base writes: the commit tagged v$BASE_VERSION in the base tree (with
# KSRC=, your own tree's tag; BASE_COMMIT= overrides it).  The per-patch
# base-commit: trailer of patches/ moves to the cover letter.
# Prints a table patch / To / Cc and writes it to build/mail/recipients.tsv.
#
# Inputs: TOP BUILD AUTHOR TREE BASETREE BASE_VERSION (make exports them);
# MAIL_VERSION (make passes V=), BASE_COMMIT, MAIL_DIR (default build/mail).
set -euo pipefail
: "${TOP:?}" "${BUILD:?}" "${AUTHOR:?}" "${TREE:?}" "${BASETREE:?}" "${BASE_VERSION:?}"
out=${MAIL_DIR:-$BUILD/mail}
ver=${MAIL_VERSION:-}
die() { echo "mail: error: $*" >&2; exit 1; }
[ -z "$ver" ] || [[ $ver =~ ^[1-9][0-9]*$ ]] || die "V=$ver is not a version number"
[ "$ver" = 1 ] && ver=
prefix="PATCH${ver:+ v$ver}"

[ -f "$BASETREE/scripts/get_maintainer.pl" ] || "$TOP/scripts/base-tree.sh"
[ -f "$BASETREE/scripts/get_maintainer.pl" ] || die "no $BASETREE/scripts/get_maintainer.pl"
base_commit=${BASE_COMMIT:-$(git -C "$TREE" rev-parse -q --verify "v$BASE_VERSION^{commit}" 2>/dev/null ||
	git -C "$BASETREE" rev-parse HEAD)}
[[ $base_commit =~ ^[0-9a-f]{40}$ ]] || die "base commit '$base_commit' is not a commit id"

mapfile -t patches < <("$TOP/scripts/series-list.sh")
n=${#patches[@]}
[ "$n" -gt 0 ] || die "the series is empty"
w=${#n}
[ "$w" -ge 2 ] || w=2
rm -rf "$out"
mkdir -p "$out"

sob="Signed-off-by: $AUTHOR"
domain=${AUTHOR##*@}
domain=${domain%>}
stamp=$(date -u +%Y%m%d%H%M%S).$$
msgid() { echo "<$stamp-${ver:-1}-$1-syncio@$domain>"; }	# msgid K
cover_id=$(msgid 0)

gm() {	# gm PATCH-FILE ROLE-OPTIONS...: get_maintainer.pl, offline, one address a line
	local f=$1
	shift
	(cd "$BASETREE" && perl scripts/get_maintainer.pl --no-git --no-git-fallback \
		--norolestats --remove-duplicates "$@" "$f") |
		sed -e 's/[[:space:]]*$//' -e '/^$/d'
}
# fold LINE-NAME ADDR...: one header, one address per continuation line
fold() {
	local name=$1 i
	shift
	[ $# -gt 0 ] || return 0
	printf '%s: %s' "$name" "$1"
	shift
	for i in "$@"; do printf ',\n    %s' "$i"; done
	printf '\n'
}
unfold_subject() {	# the Subject: of a mail, continuation lines joined
	awk '/^$/ { exit } /^Subject: / { s = substr($0, 10); on = 1; next }
		on && /^[ \t]/ { sub(/^[ \t]+/, " "); s = s $0; next } { on = 0 }
		END { print s }' "$1"
}

declare -A all_to=() all_cc=()
order_to=() order_cc=()
tsv=$out/recipients.tsv
printf 'mail\tto\tcc\n' > "$tsv"
i=0
for p in "${patches[@]}"; do
	i=$((i + 1))
	src=$TOP/patches/$p
	f=$out/$p
	mapfile -t to < <(gm "$src" --m --nol --nor)
	mapfile -t cc < <(gm "$src" --nom --l --r)
	if [ ${#to[@]} -eq 0 ]; then
		# No maintainer: the lists become the addressees.
		to=("${cc[@]}")
		cc=()
	fi
	[ ${#to[@]} -gt 0 ] || die "get_maintainer.pl found no recipient for patches/$p"
	# A maintainer who is also a reviewer is an addressee only.
	declare -A in_to=()
	for a in "${to[@]}"; do in_to[$a]=1; done
	keep=()
	for a in "${cc[@]}"; do [ -n "${in_to[$a]:-}" ] || keep+=("$a"); done
	cc=("${keep[@]}")
	unset in_to
	for a in "${to[@]}"; do [ -n "${all_to[$a]:-}" ] || { all_to[$a]=1; order_to+=("$a"); }; done
	for a in "${cc[@]}"; do [ -n "${all_cc[$a]:-}" ] || { all_cc[$a]=1; order_cc+=("$a"); }; done
	hdr=$( { fold To "${to[@]}"; fold Cc "${cc[@]}"
		echo "Message-Id: $(msgid "$i")"
		echo "In-Reply-To: $cover_id"
		echo "References: $cover_id"; } )
	# Number the subject, add the headers at the end of the header block,
	# add the sender's Signed-off-by before "---" if it is not there yet,
	# and drop the base-commit: trailer (the cover letter carries it).
	# From: and Subject: are unfolded (b4 0.12 fails on a folded one;
	# git send-email folds them again).
	awk -v sob="$sob" -v hdr="$hdr" -v tag="[$prefix $(printf "%0${w}d/%0${w}d" "$i" "$n")]" '
		!body && h != "" && /^[ \t]/ { sub(/^[ \t]+/, " "); h = h $0; next }
		!body && h != "" { print h; h = "" }
		!body && /^Subject: / { sub(/^Subject: (\[[^]]*\] )?/, "Subject: " tag " ") }
		!body && /^(From|Subject): / { h = $0; next }
		!body && /^$/ { print hdr; body = 1 }
		body && /^Signed-off-by: / { if ($0 == sob) have = 1 }
		body && /^---$/ && !sep { if (!have) print sob; sep = 1 }
		sep && /^base-commit: / { drop = 1; next }
		{ if (drop && /^$/) next; print }' "$src" > "$f"
	grep -qxF -- "$sob" "$f" || die "no $sob in $f"
	printf '%s\t%s\t%s\n' "$p" "$(IFS=,; echo "${to[*]}")" "$(IFS=,; echo "${cc[*]}")" >> "$tsv"
done

# The cover letter: everything any patch is addressed to, and the lists
# (and reviewers) that are not already addressees.
cover_cc=()
for a in "${order_cc[@]}"; do [ -n "${all_to[$a]:-}" ] || cover_cc+=("$a"); done
subject=$(sed -n 's/^Subject: //p' "$TOP/cover-letter.txt" | head -1)
{
	echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
	echo "From: $AUTHOR"
	echo "Date: $(date -R)"
	echo "Subject: [$prefix $(printf "%0${w}d/%0${w}d" 0 "$n")] ${subject:-synchronous I/O series}"
	fold To "${order_to[@]}"
	fold Cc "${cover_cc[@]}"
	echo "Message-Id: $cover_id"
	echo
	sed '1,/^$/d' "$TOP/cover-letter.txt"
	echo
	echo "base-commit: $base_commit"
} > "$out/0000-cover-letter.patch"
printf '%s\t%s\t%s\n' 0000-cover-letter.patch "$(IFS=,; echo "${order_to[*]}")" \
	"$(IFS=,; echo "${cover_cc[*]}")" >> "$tsv"

# The whole thread as one mbox, cover letter first.
for f in "$out"/0000-cover-letter.patch "${patches[@]/#/$out/}"; do
	cat "$f"
	echo
done > "$out/series.mbox"

# The table: a name per maintainer (the address without the name when it
# has none), the lists by address.
short() { tr , '\n' <<< "$1" | sed -e 's/^"\{0,1\}\([^"<]*[^"< ]\)"\{0,1\} *<.*/\1/' -e 's/^<\(.*\)>$/\1/' | paste -sd, - | sed 's/,/, /g'; }
echo "mail: recipients (To: get_maintainer.pl maintainers; Cc: lists and reviewers)"
printf '%-4s  %-44s  %-40s  %s\n' mail subject To Cc
tail -n +2 "$tsv" | while IFS=$'\t' read -r file to cc; do
	num=${file%%-*}
	s=$(unfold_subject "$out/$file" | sed 's/^\[[^]]*\] //')
	printf '%-4s  %-44.44s  %-40s  %s\n' "$num" "$s" "$(short "$to")" "$(short "$cc")"
done | sort
echo "mail: $((n + 1)) mails in $out (cover letter + $n patches, [$prefix k/$n]), signed off by $AUTHOR"
echo "mail: threaded under $cover_id, base-commit $base_commit; the whole thread: $out/series.mbox"
echo "mail: check with make send (a dry run), send with make send SEND=1"
