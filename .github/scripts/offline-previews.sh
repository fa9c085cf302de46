#!/usr/bin/env bash
# The offline preview of every stack under stacks/, for the PR comment and the run's artifacts.
#
#   .github/scripts/offline-previews.sh OUT_DIR
#
# A stack's policy config, policy/config/<stack>.json, is used when it exists, as the
# cloud job's `pulumi preview --policy-pack-config` uses it. Writes OUT_DIR/<stack>.json (the
# contract's document), OUT_DIR/<stack>/capacity.png and summary.md (aks-kueue report), and
# OUT_DIR/comment.md (every stack's summary). It always finishes, so the comment is posted; the
# stacks that were rejected (exit 1) or could not be previewed (exit 2) are listed in
# OUT_DIR/rejected, which the workflow then fails on.
#
# The replay comparison: a step before this one that writes REPLAY_DIR/<stack>.md (Markdown;
# REPLAY_DIR defaults to OUT_DIR/replay) gets it into that stack's summary, after the capacity
# table, where the summary's `<!-- aks-kueue:replay -->` slot stands.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/comment.sh"

out="${1:?usage: offline-previews.sh OUT_DIR}"
cli="${AKS_KUEUE:-venv/bin/aks-kueue}"
replays="${REPLAY_DIR:-$out/replay}"
slot='<!-- aks-kueue:replay -->'
mkdir -p "$out"
: > "$out/rejected"
{
  echo "# aks-kueue: offline preview with the policy pack"
  echo
  echo "No cloud involved: the program ran under the Pulumi SDK's mocks and every policy of \`policy/\` ran over what it registered."
} > "$out/comment.md"

# A fleet's stacks read each other's outputs (aks-kueue:fleet). Offline, each member first gets the
# others' outputs from their own offline previews, in the order of a fleet's first pulumi ups, and
# then takes them with --stack-outputs (aks_kueue/preview/fleet.py).
fleet="$out/fleet-outputs"
"$(dirname "$cli")/python" -m aks_kueue.preview.fleet stacks "$fleet" 2> "$out/fleet-outputs.stderr" || true

for file in stacks/Pulumi.*.yaml; do
  stack="${file#stacks/Pulumi.}"
  stack="${stack%.yaml}"
  pack_config=()
  [ -f "policy/config/$stack.json" ] && pack_config=(--policy-config "policy/config/$stack.json")
  others=()
  [ -f "$fleet/$stack.args" ] && mapfile -t others < "$fleet/$stack.args"
  "$cli" preview --stack "$stack" "${pack_config[@]}" "${others[@]}" --json > "$out/$stack.json" 2> "$out/$stack.stderr"
  code=$?
  echo >> "$out/comment.md"
  if [ "$code" -eq 2 ]; then
    unusable "$stack" preview previewed rejected
    continue
  fi
  [ "$code" -eq 0 ] || echo "$stack (exit $code)" >> "$out/rejected"
  # The report repeats the run; it writes the chart and the same Markdown as --format markdown.
  "$cli" report --stack "$stack" "${pack_config[@]}" "${others[@]}" --out "$out/$stack" > /dev/null 2>> "$out/$stack.stderr"
  if [ -f "$replays/$stack.md" ]; then
    awk -v slot="$slot" -v replay="$replays/$stack.md" '
      $0 == slot { print "### Replay"; print ""; while ((getline line < replay) > 0) print line; next }
      { print }' "$out/$stack/summary.md" >> "$out/comment.md"
  else
    cat "$out/$stack/summary.md" >> "$out/comment.md"
  fi
done

if [ -n "${RUN_URL:-}" ]; then
  printf '\nCapacity charts (`capacity.png` per stack) are in the artifacts of [this run](%s).\n' "$RUN_URL" \
    >> "$out/comment.md"
fi
truncate_comment 60000 summary
exit 0
