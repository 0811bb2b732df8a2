#!/bin/bash
# Print the patch file names of the series, in order, one per line.
sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]].*//' "${TOP:?}/series"
