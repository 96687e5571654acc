#!/bin/sh
# The MCP server delegate runs when Node.js is missing or too old: a minimal stdio responder in
# plain sh. Claude Code sees a connected server (not a failed one, whose failure it caches for
# 15 minutes), whose instructions and one tool say what to install; once Node.js is there, the
# next start of Claude Code runs the real server.
#   sh needs-node-server.sh "<what was found>"
# It answers initialize, ping, tools/list and tools/call, every other request with an error, and
# no notification; it ends when stdin closes. One JSON-RPC message a line, as MCP's stdio is.
found=$1
# Plain text for a JSON string: no quote, backslash or control character in it.
text="delegate needs Node.js 20 or newer on PATH ($found): install it from https://nodejs.org or your package manager (e.g. brew install node, or nvm install 20), then restart Claude Code; its tools come back on the next start."

reply() {
  printf '{"jsonrpc":"2.0","id":%s,%s}\n' "$1" "$2"
}

# Only the shell itself: PATH may hold nothing else. Clients write compact JSON (JSON.stringify).
while IFS= read -r line || [ -n "$line" ]; do
  # The request's id: the last "id" of the line (the SDKs write it after params); none for a
  # notification, which gets no answer.
  case $line in *'"id":'*) ;; *) continue ;; esac
  id=${line##*\"id\":}
  id=${id%%[,\}]*}
  case $line in
    *'"method":"initialize"'*)
      version=2025-11-25
      case $line in *'"protocolVersion":"'*)
        version=${line#*\"protocolVersion\":\"}
        version=${version%%\"*} ;;
      esac
      reply "$id" "\"result\":{\"protocolVersion\":\"$version\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"delegate\",\"version\":\"needs-node\"},\"instructions\":\"$text\"}"
      ;;
    *'"method":"ping"'*) reply "$id" '"result":{}' ;;
    *'"method":"tools/list"'*)
      reply "$id" "\"result\":{\"tools\":[{\"name\":\"setup\",\"description\":\"$text\",\"inputSchema\":{\"type\":\"object\",\"properties\":{}}}]}"
      ;;
    *'"method":"tools/call"'*)
      reply "$id" "\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"$text\"}],\"isError\":true}"
      ;;
    *'"method":'*)
      reply "$id" "\"error\":{\"code\":-32601,\"message\":\"not served until Node.js 20 or newer is on PATH: $text\"}"
      ;;
    # A response to a request of ours (there are none): nothing to answer.
  esac
done
