#!/bin/sh
# delegate's status line reader, copied to <data home>/bin/ by `delegate statusline install`.
# Claude Code runs it on every refresh, so it starts no process of its own (on Linux; elsewhere
# one `date`): the delegate server and task workers keep every project's line pre-rendered in
# <data home>/status/lines, one "<expires, epoch s> <project real path><TAB><text>" line per
# part, after a "clock <boot id> <boot epoch>" line; this prints this project's parts that
# have not expired yet, or nothing. Given a session_id (and a file with a "sessions" line), it
# reads the "session <id> <expires> <project><TAB><text>" lines instead: this session's own
# parts, then how many other sessions have some ("+2 other sessions").
# $1, if given, is a file holding the status line command this one chains: it runs first, on
# the same stdin, and its output comes first.

# `read` instead of `$(cat)`: one process fewer. JSON needs no newlines to stay JSON.
input=
while IFS= read -r chunk || [ -n "$chunk" ]; do input="$input$chunk"; done

if [ -n "${1:-}" ] && [ -r "$1" ]; then
  if command -v bash >/dev/null 2>&1; then
    printf '%s\n' "$input" | bash "$1"
  else
    printf '%s\n' "$input" | sh "$1"
  fi
fi

# This script lives in <data home>/bin/, maybe reached through symlinks: each one to the file
# is followed (`readlink` runs only then; `readlink -f` is not on every system), then `cd -P`
# (a builtin, no subshell) resolves the folder's own, and comes back.
start=$PWD
self=$0
while [ -L "$self" ]; do
  link=$(readlink -- "$self") || break
  case $link in
    /*) self=$link ;;
    *) case $self in */*) self=${self%/*}/$link ;; *) self=$link ;; esac ;;
  esac
done
case $self in
  */*) home=${self%/*} ;;
  *) home=. ;;
esac
CDPATH='' cd -P -- "$home" 2>/dev/null || exit 0
home=${PWD%/bin}
cd -- "$start" 2>/dev/null
file=$home/status/lines
[ -s "$file" ] || exit 0

# The project: workspace.project_dir, else workspace.current_dir, else cwd, else here.
dir=
for key in project_dir current_dir cwd; do
  case $input in
    *"\"$key\""*) ;;
    *) continue ;;
  esac
  rest=${input#*"\"$key\""}
  rest=${rest#*\"}
  dir=${rest%%\"*}
  case $dir in
    *\\*)
      # An escaped character (a backslash or quote in the path): let sed decode the string.
      dir=$(printf '%s\n' "$input" |
        sed -n -E 's/.*"'"$key"'"[[:space:]]*:[[:space:]]*"(([^"\\]|\\.)*)".*/\1/p' |
        sed -e 's/\\\(.\)/\1/g')
      ;;
  esac
  [ -n "$dir" ] && break
done
[ -n "$dir" ] || dir=$start
# This session's id: a UUID, so no escapes to decode; anything else is not one.
session=
case $input in
  *'"session_id"'*)
    rest=${input#*'"session_id"'}
    rest=${rest#*\"}
    session=${rest%%\"*}
    case $session in
      '' | - | *[!A-Za-z0-9_.-]*) session= ;;
    esac
    ;;
esac
# Tasks are keyed by the project's real path: resolve symlinks the same way (a builtin).
cd -P -- "$dir" 2>/dev/null && dir=$PWD

# The time without a `date` process: the boot's start (written by Node) plus /proc/uptime,
# while the boot id still matches; else `date`.
boot_id=
uptime=
if [ -r /proc/sys/kernel/random/boot_id ] && [ -r /proc/uptime ]; then
  read -r boot_id </proc/sys/kernel/random/boot_id
  read -r uptime _ </proc/uptime
fi

tab='	' # a literal tab: no process
now=
out=
split=   # set by the "sessions" line: with a session id, only session lines count
others=' '
count=0
while IFS= read -r line || [ -n "$line" ]; do
  owner=
  case $line in
    "clock $boot_id "*)
      boot=${line##* }
      case $boot:$uptime in
        :* | *: | *[!0-9.:]*) ;;
        *) [ -n "$boot_id" ] && now=$((boot + ${uptime%%.*})) ;;
      esac
      continue
      ;;
    clock\ *) continue ;;
    sessions)
      [ -n "$session" ] && split=1
      continue
      ;;
    session\ *)
      [ -n "$split" ] || continue
      line=${line#session }
      owner=${line%% *}
      line=${line#* }
      ;;
    *) [ -z "$split" ] || break ;; # the whole lines come after every session line
  esac
  rest=${line#* }
  [ "${rest%%"$tab"*}" = "$dir" ] || continue
  [ -n "$now" ] || now=$(date +%s)
  expires=${line%% *}
  case $expires in
    '' | *[!0-9]*) continue ;;
  esac
  [ "$expires" -gt "$now" ] || continue
  if [ -z "$owner" ] || [ "$owner" = "$session" ]; then
    out="${out:+$out | }${rest#*"$tab"}"
  else
    case $others in
      *" $owner "*) ;;
      *)
        others="$others$owner "
        count=$((count + 1))
        ;;
    esac
  fi
done <"$file"
if [ "$count" -gt 0 ]; then
  more="+$count other session"
  [ "$count" -eq 1 ] || more="${more}s"
  out="${out:+$out | }$more"
fi
[ -n "$out" ] && printf 'delegate: %s\n' "$out"
exit 0
