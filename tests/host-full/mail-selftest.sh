#!/bin/bash
# Host-side self-test of make mail, make send and b4 compatibility (no VM,
# no network; part of make check-full, not of make check: about 2-4 min, most
# of it checking out and hashing a kernel tree).  Needs the base tree
# (make base) and installs git-email and b4 (scripts/deps.sh) if missing.
#
#  - scripts/mail.sh with V=3: every mail has recipients from
#    get_maintainer.pl, [PATCH v3 k/N] subjects in order, one Message-Id
#    each, every patch In-Reply-To/References the cover letter, the cover
#    letter addressed to the union and ending in base-commit: (the base
#    tree's v$BASE_VERSION commit); the sender's Signed-off-by exactly once
#    for the identity that signed the patches and for a different one (the
#    project identity of the Makefile, or git's when they are the same);
#  - scripts/send.sh: the dry run sends each mail to exactly its To:/Cc:
#    even with sendemail.to/cc/bcc/ccCmd configured;
#  - b4 am --offline-mode -m series.mbox in a git clone of the base: the
#    am-ready mbox, applied with git am, gives exactly the tree that
#    patches/ gives (git apply of each patch onto v$BASE_VERSION), and the
#    quilt tree build/linux when the whole series is pushed there;
#  - and that each check can fail: a mail without recipients (send.sh
#    refuses), a broken thread, a changed patch in b4's output.
# Prints KTAP.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
TOP=${TOP:-$(dirname "$(dirname "$here")")}
BUILD=${BUILD:-$TOP/build}
BASE_VERSION=${BASE_VERSION:-$(sed -n 's/^BASE_VERSION *:= *//p' "$TOP/Makefile")}
TREE=${TREE:-$BUILD/linux}
BASETREE=${BASETREE:-$BUILD/linux-base}
export TOP BUILD BASE_VERSION TREE BASETREE
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
proj_name=$(sed -n 's/^PROJECT_NAME *:= *//p' "$TOP/Makefile")
proj_email=$(sed -n 's/^PROJECT_EMAIL *:= *//p' "$TOP/Makefile")
# The identity the patches are signed with (their first Signed-off-by).
signer=$(sed -n 's/^Signed-off-by: //p' "$TOP/patches/$("$TOP/scripts/series-list.sh" | head -1)" | head -1)
other="$proj_name <$proj_email>"
if [ "$other" = "$signer" ]; then
	other="$(git config user.name) <$(git config user.email)>"
fi
mapfile -t patches < <("$TOP/scripts/series-list.sh")
n=${#patches[@]}

echo "KTAP version 1"
echo "1..12"
t=0
check() {	# check DESC STATUS [DETAILS]
	t=$((t + 1))
	if [ "$2" -eq 0 ]; then
		echo "ok $t $1"
	else
		echo "not ok $t $1"
		[ -z "${3:-}" ] || while IFS= read -r l; do echo "# $l"; done <<< "$3"
	fi
}
skip() { t=$((t + 1)); echo "ok $t $1 # SKIP $2"; }

"$TOP/scripts/deps.sh" git-email b4 >/dev/null 2>&1
have_b4=0
command -v b4 >/dev/null && have_b4=1

hdr() {	# hdr FILE NAME: one header of a mail, unfolded
	awk -v h="$2" '/^$/ { exit }
		/^[^ \t]/ { on = (tolower(substr($0, 1, length(h) + 1)) == tolower(h) ":") }
		on { sub(/^[^ \t][^:]*: */, ""); sub(/^[ \t]+/, " "); s = s $0 }
		END { print s }' "$1"
}
# thread DIR: the mails form one thread under the cover letter; prints
# what is wrong and fails otherwise.
thread() {
	local d=$1 cover id k=0 f s err=
	cover=$(hdr "$d/0000-cover-letter.patch" Message-Id)
	[[ $cover =~ ^\<[^\>]+@[^\>]+\>$ ]] || err+="cover letter: bad Message-Id '$cover'"$'\n'
	declare -A seen=([$cover]=1)
	for p in "${patches[@]}"; do
		k=$((k + 1))
		f=$d/$p
		id=$(hdr "$f" Message-Id)
		[ -n "$id" ] && [ -z "${seen[$id]:-}" ] || err+="$p: Message-Id '$id' missing or not unique"$'\n'
		seen[$id]=1
		[ "$(hdr "$f" In-Reply-To)" = "$cover" ] || err+="$p: In-Reply-To is not the cover letter"$'\n'
		[ "$(hdr "$f" References)" = "$cover" ] || err+="$p: References is not the cover letter"$'\n'
		s=$(hdr "$f" Subject)
		[[ $s == "[PATCH v3 $(printf '%02d/%02d' "$k" "$n")] "* ]] || err+="$p: subject '$s'"$'\n'
	done
	[[ $(hdr "$d/0000-cover-letter.patch" Subject) == "[PATCH v3 00/$(printf '%02d' "$n")] "* ]] ||
		err+="cover letter: subject"$'\n'
	printf '%s' "$err"
	[ -z "$err" ]
}
addrs() { tr ',' '\n' | sed -e 's/.*<\([^>]*\)>.*/\1/' -e 's/^ *//' -e 's/ *$//' -e '/^$/d' | sort -u; }

# 1: make mail V=3 with the identity that signed the patches.
out=$(AUTHOR="$signer" MAIL_VERSION=3 MAIL_DIR="$tmp/mail" "$TOP/scripts/mail.sh" 2>&1)
rc=$?
files=("$tmp"/mail/[0-9]*.patch)
check "mail.sh V=3 writes cover letter + $n patches and series.mbox" \
	"$([ $rc = 0 ] && [ ${#files[@]} = $((n + 1)) ] && [ -s "$tmp/mail/series.mbox" ]; echo $?)" "$out"

# 2: recipients.
err=
declare -A union=()
for p in 0000-cover-letter.patch "${patches[@]}"; do
	to=$(hdr "$tmp/mail/$p" To)
	[ -n "$to" ] || err+="$p: no To:"$'\n'
	[ "$p" = 0000-cover-letter.patch ] && continue
	while read -r a; do union[$a]=1; done < <({ echo "$to"; hdr "$tmp/mail/$p" Cc; } | tr ',' '\n' | addrs)
	# The To: is what get_maintainer.pl names as maintainers (or the lists).
	want=$(cd "$BASETREE" && perl scripts/get_maintainer.pl --no-git --no-git-fallback --norolestats \
		--m --nol --nor "$TOP/patches/$p" | addrs)
	[ -z "$want" ] || [ "$(addrs <<< "$to")" = "$want" ] || err+="$p: To: is not get_maintainer.pl's maintainers"$'\n'
done
cover_all=$({ hdr "$tmp/mail/0000-cover-letter.patch" To; echo ,; hdr "$tmp/mail/0000-cover-letter.patch" Cc; } | addrs)
[ "$cover_all" = "$(printf '%s\n' "${!union[@]}" | sort -u)" ] || err+="cover letter: To+Cc is not the union of the patches' recipients"$'\n'
check "every mail has a To:, patches' To: from get_maintainer.pl, cover letter to the union" "$([ -z "$err" ]; echo $?)" "$err"

# 3: threading and subjects.
err=$(thread "$tmp/mail")
check "one thread under the cover letter, [PATCH v3 k/$n] in order" $? "$err"

# 4: base-commit.
base=$(git -C "$TREE" rev-parse "v$BASE_VERSION^{commit}" 2>/dev/null)
got=$(sed -n 's/^base-commit: //p' "$tmp/mail/0000-cover-letter.patch")
others=$(cat "${patches[@]/#/$tmp/mail/}" | grep -c '^base-commit:')
check "cover letter ends in base-commit: $base (and no patch carries one)" \
	"$([ -n "$base" ] && [ "$got" = "$base" ] && [ "$others" = 0 ]; echo $?)" "got '$got', $others in patches"

# 5: the sender's Signed-off-by exactly once, for both identities.
err=
for who in "$signer" "$other"; do
	d=$tmp/mail-id
	AUTHOR="$who" MAIL_DIR="$d" "$TOP/scripts/mail.sh" >/dev/null 2>&1 || err+="mail.sh failed for $who"$'\n'
	for p in "${patches[@]}"; do
		c=$(grep -cxF "Signed-off-by: $who" "$d/$p")
		[ "$c" = 1 ] || err+="$p: $c Signed-off-by: $who"$'\n'
		last=$(awk '/^---$/ { print prev; exit } /^Signed-off-by: / { prev = $0 }' "$d/$p")
		[ "$last" = "Signed-off-by: $who" ] || err+="$p: sender's Signed-off-by is not the last one"$'\n'
	done
	rm -rf "$d"
done
check "sender's Signed-off-by once and last, as the patches' signer and as another identity" \
	"$([ -z "$err" ]; echo $?)" "$(head -5 <<< "$err")"

# 6: send.sh dry run: exactly the headers' recipients, whatever is configured.
cfg=$tmp/gitconfig
git config -f "$cfg" sendemail.to config-to@example.invalid
git config -f "$cfg" sendemail.cc config-cc@example.invalid
git config -f "$cfg" sendemail.bcc config-bcc@example.invalid
git config -f "$cfg" sendemail.ccCmd "echo cccmd@example.invalid"
git config -f "$cfg" sendemail.smtpServer /bin/false
out=$(GIT_CONFIG_GLOBAL=$cfg AUTHOR="$signer" MAIL_DIR="$tmp/mail" BUILD="$tmp/build" "$TOP/scripts/send.sh" 2>&1)
rc=$?
check "send.sh dry run: each mail to exactly its To:/Cc: despite sendemail.to/cc/bcc/ccCmd" \
	"$([ $rc = 0 ] && ! grep -q example.invalid "$tmp/build/logs/send-dry-run.log"; echo $?)" "$(tail -5 <<< "$out")"

# 7: it can fail: a mail without recipients.
cp -r "$tmp/mail" "$tmp/mail-norcpt"
f=$tmp/mail-norcpt/${patches[2]}
awk '/^$/ { b = 1 } !b && /^[^ \t]/ { on = /^(To|Cc):/ } b || !on' "$f" > "$f.new" && mv "$f.new" "$f"
out=$(GIT_CONFIG_GLOBAL=$cfg AUTHOR="$signer" MAIL_DIR="$tmp/mail-norcpt" BUILD="$tmp/build" "$TOP/scripts/send.sh" 2>&1)
rc=$?
check "send.sh refuses a mail without recipients" "$([ $rc != 0 ]; echo $?)" "$(tail -3 <<< "$out")"

# 8: it can fail: a broken thread.
cp -r "$tmp/mail" "$tmp/mail-thread"
sed -i '0,/^In-Reply-To: .*/s//In-Reply-To: <elsewhere@example.invalid>/' "$tmp/mail-thread/${patches[4]}"
thread "$tmp/mail-thread" >/dev/null
rc=$?
check "a patch not replying to the cover letter is a broken thread" "$([ $rc != 0 ]; echo $?)"

# 9-12: b4 am, then git am onto a clone of the base.
if [ $have_b4 = 0 ]; then
	for d in "b4 am of series.mbox" "git am of b4's mbox gives the tree of patches/" \
		"... and that of the quilt tree" "a changed patch in b4's mbox gives a different tree"; do
		skip "$d" "b4 is not installed"
	done
	exit 0
fi
mt=$BUILD/mailtest/base
if ! git -C "$mt" rev-parse -q --verify "$base^{commit}" >/dev/null 2>&1; then
	rm -rf "$mt"
	mkdir -p "$BUILD/mailtest"
	git clone -q --no-checkout "$TREE" "$mt"
fi
git -C "$mt" config user.name "${signer% <*}"
email=${signer##*<}
git -C "$mt" config user.email "${email%>}"
git -C "$mt" am --abort >/dev/null 2>&1
git -C "$mt" checkout -q -f --detach "$base" && git -C "$mt" clean -fdxq
mkdir -p "$tmp/b4"
out=$(cd "$mt" && b4 --offline-mode --no-stdin -n am -m "$tmp/mail/series.mbox" -o "$tmp/b4" -n series 2>&1)
rc=$?
check "b4 am --offline-mode -m series.mbox: $n patches, base-commit recognised" \
	"$([ $rc = 0 ] && [ -s "$tmp/b4/series.mbx" ] && grep -q "Total patches: $n" <<< "$out" &&
		grep -q "Base: using specified base-commit" <<< "$out"; echo $?)" "$(tail -8 <<< "$out")"

# The reference: patches/ applied with git apply onto v$BASE_VERSION.
export GIT_INDEX_FILE=$tmp/ref.index
git -C "$mt" read-tree "$base"
ref_ok=0
for p in "${patches[@]}"; do
	git -C "$mt" apply --cached "$TOP/patches/$p" || { ref_ok=1; break; }
done
ref=$(git -C "$mt" write-tree)
unset GIT_INDEX_FILE
am_out=$(git -C "$mt" am -q "$tmp/b4/series.mbx" 2>&1)
am_rc=$?
got=$(git -C "$mt" rev-parse 'HEAD^{tree}')
nc=$(git -C "$mt" rev-list --count "$base..HEAD")
check "git am of b4's mbox: $n commits, the tree of patches/ (git apply onto v$BASE_VERSION)" \
	"$([ $am_rc = 0 ] && [ $ref_ok = 0 ] && [ "$nc" = "$n" ] && [ "$got" = "$ref" ]; echo $?)" \
	"$am_out$(git -C "$mt" diff --stat "$ref" HEAD 2>/dev/null | tail -3)"

# The quilt tree, when the whole series is pushed there (read only: its
# files are hashed into the clone's object store through a private index).
applied=$(cat "$TREE/.pc/applied-patches" 2>/dev/null)
if [ "$applied" = "$(printf '%s\n' "${patches[@]}")" ]; then
	export GIT_INDEX_FILE=$tmp/quilt.index
	git -C "$mt" read-tree "$base"
	git --git-dir="$mt/.git" --work-tree="$TREE" add -A -- . ':!.pc' ':!patches' ':!series' 2>/dev/null
	qt=$(git -C "$mt" write-tree)
	unset GIT_INDEX_FILE
	if [ "$(cat "$TREE/.pc/applied-patches" 2>/dev/null)" != "$applied" ]; then
		skip "git am of b4's mbox gives the quilt tree $TREE" "quilt pushed or popped meanwhile"
	else
		check "git am of b4's mbox gives the quilt tree $TREE" "$([ "$qt" = "$got" ]; echo $?)" \
			"$(git -C "$mt" diff --stat "$qt" HEAD | tail -5)"
	fi
else
	skip "git am of b4's mbox gives the quilt tree $TREE" "the series is not fully pushed there"
fi

# It can fail: one changed line in b4's output.
sed '0,/^+.*BDI_CAP_SYNC/s/BDI_CAP_SYNC/BDI_CAP_SYMC/' "$tmp/b4/series.mbx" > "$tmp/b4/bad.mbx"
git -C "$mt" checkout -q -f --detach "$base"
git -C "$mt" am -q "$tmp/b4/bad.mbx" >/dev/null 2>&1
bad_rc=$?
git -C "$mt" am --abort >/dev/null 2>&1
bad=$(git -C "$mt" rev-parse 'HEAD^{tree}')
check "a changed patch in b4's mbox does not give the tree of patches/" \
	"$([ $bad_rc != 0 ] || [ "$bad" != "$ref" ]; echo $?)"
git -C "$mt" checkout -q -f --detach "$base"
