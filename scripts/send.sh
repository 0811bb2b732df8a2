#!/bin/bash
# make send [SEND=1]: git send-email of the mails make mail wrote under
# build/mail/, to exactly the recipients their own To: and Cc: headers
# name, threaded by their own Message-Id/In-Reply-To/References headers.
#
# The configuration's and the patches' other sources of recipients are
# switched off: --no-to --no-cc --no-bcc (sendemail.to/cc/bcc),
# --no-to-cover --no-cc-cover, --no-signed-off-by-cc, --suppress-cc for
# every category except "cc" (the Cc: header), --no-thread (the mails carry
# their threading headers).  Without SEND=1 it is a dry run
# (--dry-run): it prints each mail's From/To/Cc/Subject/Message-Id/
# In-Reply-To and fails unless every mail goes to exactly the addresses of
# its To: and Cc: headers.  With SEND=1 the dry run and its check come
# first, then the real send with your sendemail configuration (SMTP server,
# identity; git asks before each mail unless sendemail.confirm says
# otherwise).  Installs git-email (scripts/deps.sh) if it is missing.
#
# Inputs: TOP BUILD AUTHOR (make exports them); SEND; MAIL_DIR.
set -euo pipefail
: "${TOP:?}" "${BUILD:?}" "${AUTHOR:?}"
dir=${MAIL_DIR:-$BUILD/mail}
die() { echo "send: error: $*" >&2; exit 1; }
[ -f "$dir/0000-cover-letter.patch" ] || die "no mails in $dir: run make mail first"
git send-email -h >/dev/null 2>&1 || [ $? -eq 129 ] || "$TOP/scripts/deps.sh" git-email
mails=("$dir"/[0-9][0-9][0-9][0-9]-*.patch)
opts=(--no-thread --no-to --no-cc --no-bcc --no-to-cover --no-cc-cover
      --no-signed-off-by-cc --suppress-cc=author --suppress-cc=self --suppress-cc=sob
      --suppress-cc=bodycc --suppress-cc=misc-by --suppress-cc=cccmd
      --from="$AUTHOR")
mkdir -p "$BUILD/logs"
log=$BUILD/logs/send-dry-run.log
git send-email --dry-run --confirm=never "${opts[@]}" "${mails[@]}" < /dev/null > "$log" 2>&1 ||
	{ cat "$log" >&2; die "git send-email --dry-run failed (log: $log)"; }

# addrs: the bare addresses of a mail's To: and Cc: headers, sorted.
addrs() {
	awk '/^$/ { exit }
		/^[^ \t]/ { on = ($0 ~ /^(To|Cc):/) }
		on { sub(/^(To|Cc):/, ""); print }' "$1" | tr ',' '\n' |
		sed -e 's/.*<\([^>]*\)>.*/\1/' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e '/^$/d' | sort -u
}
# What the dry run sent each mail to, one line per mail in order:
# the RCPT TO addresses, sorted, space-separated.
# An SMTP server logs RCPT TO: lines, a sendmail program (sendemail.smtpServer
# a path: msmtp, sendmail) one "Sendmail: PROGRAM [-OPTION...] ADDRESS..." line.
mapfile -t sent < <(awk '/^RCPT TO:/ { sub(/^RCPT TO:</, ""); sub(/>$/, ""); s = s " " $0 }
	/^Sendmail: / { for (i = 3; i <= NF; i++) { if ($i == "-f") { i++; continue }
		if ($i !~ /^-/) s = s " " $i } }
	/^Result: / { print s; s = "" }' "$log" |
	while read -r line; do tr ' ' '\n' <<< "$line" | sed '/^$/d' | sort -u | paste -sd' ' -; done)
[ ${#sent[@]} -eq ${#mails[@]} ] ||
	die "the dry run reports ${#sent[@]} mails, there are ${#mails[@]} (log: $log)"
bad=0 i=0
for m in "${mails[@]}"; do
	want=$(addrs "$m" | paste -sd' ' -)
	[ -n "$want" ] || { echo "send: $(basename "$m") has no To: or Cc:" >&2; bad=1; }
	if [ "${sent[$i]}" != "$want" ]; then
		echo "send: $(basename "$m"): git send-email would send to '${sent[$i]}', the headers say '$want'" >&2
		bad=1
	fi
	i=$((i + 1))
done
# Show recipients and threading as git send-email would send them.
awk '/^(From|Subject|Message-Id|In-Reply-To|References):/ { print; on = 0; next }
	/^(To|Cc):/ { print; on = 1; next }
	on && /^[ \t]/ { print; next } { on = 0 }
	/^Result: / { print "" }' "$log"
[ "$bad" = 0 ] || die "recipients differ from the mails' headers (log: $log)"
echo "send: dry run of ${#mails[@]} mails: each goes to exactly its To: and Cc: (log: $log)"
if [ "${SEND:-}" = 1 ]; then
	echo "send: sending ${#mails[@]} mails with your sendemail configuration"
	git send-email "${opts[@]}" "${mails[@]}"
else
	echo "send: nothing sent; make send SEND=1 sends"
fi
