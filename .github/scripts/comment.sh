# Sourced by offline-previews.sh and replay-previews.sh: the parts of $out/comment.md both write.

# unusable STACK NOUN PARTICIPLE LIST: the CLI could not use the stack's input (exit 2). Its stderr
# stands in the comment in place of a summary, and the stack is listed in $out/LIST.
unusable() {
  echo "$1 (exit 2)" >> "$out/$4"
  {
    echo "## aks-kueue $2 of stack \`$1\`: :x: could not be $3"
    echo
    echo '```'
    head -c 4000 "$out/$1.stderr"
    echo '```'
  } >> "$out/comment.md"
}

# truncate_comment LIMIT WHAT: a PR comment holds at most 65,536 characters; past LIMIT the rest is
# left to the run's artifacts.
truncate_comment() {
  if [ "$(wc -c < "$out/comment.md")" -gt "$1" ]; then
    head -c "$1" "$out/comment.md" > "$out/comment.tmp"
    printf '\n\n(truncated; the whole %s is in the run artifacts)\n' "$2" >> "$out/comment.tmp"
    mv "$out/comment.tmp" "$out/comment.md"
  fi
}
