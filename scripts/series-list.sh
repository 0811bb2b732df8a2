#!/bin/bash
# Print the patch file names of the series, in order, one per line.
# --files: instead, every file the series' patches touch (paths relative to
# the kernel tree, sorted, once each).
# The series is $SERIES_DIR/series with $SERIES_DIR/patches/ (default: $TOP,
# this repository; make test-inject-build points it at a modified copy).
dir=${SERIES_DIR:-${TOP:-$(dirname "$(dirname "$(realpath "$0")")")}}
list() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]].*//' "$dir/series"; }
if [ "${1:-}" = --files ]; then
	list | while read -r p; do
		sed -n -e 's|^+++ b/\([^[:space:]]*\).*|\1|p' -e 's|^--- a/\([^[:space:]]*\).*|\1|p' "$dir/patches/$p"
	done | sort -u
	exit 0
fi
list
