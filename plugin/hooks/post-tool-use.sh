#!/bin/sh
# PostToolUse: most tool outputs are small, and that is decided here without starting Node.
# A hook input (the call and its output as JSON) under 4 KB cannot hold an output over the
# guard's smallest threshold. Any failure lets the output through unchanged; without Node 20,
# launch/run-node.sh says so on stderr and lets it through too.
input=$(cat) || exit 0
[ "${#input}" -lt 4096 ] && exit 0
# This file's real folder: each symlink to it followed (`readlink -f` is not on every system),
# then `cd -P` for the folder's own.
self=$0
while [ -L "$self" ]; do
  link=$(readlink -- "$self") || break
  case $link in
    /*) self=$link ;;
    *) case $self in */*) self=${self%/*}/$link ;; *) self=$link ;; esac ;;
  esac
done
case $self in
  */*) here=${self%/*} ;;
  *) here=. ;;
esac
here=$(CDPATH='' cd -P -- "$here" && pwd -P) || exit 0
printf '%s' "$input" | sh "$here/../launch/run-node.sh" hook "$here/../dist/post-tool-use.cjs" || exit 0
