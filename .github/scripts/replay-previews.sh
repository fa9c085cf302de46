#!/usr/bin/env bash
# Replay each stack's trace against the PR's stack file and the base branch's, for the PR comment.
#
#   .github/scripts/replay-previews.sh OUT_DIR
#
# A stack is replayed when the repository keeps a trace for it: every trace file (Workload exports,
# JSON Lines, CSV) under $REPLAY_TRACES/<stack>/ (default traces/). The base is
# stacks/Pulumi.<stack>.yaml at $BASE_REF (the PR's base commit); without it, or when the base has no
# such stack, the stack is replayed alone. Files a stack file names (queueManifests) are read from this
# checkout for both. $REPLAY_FAIL_ON_WAIT (e.g. P95=2h) makes a ClusterQueue whose p95 wait to start is
# longer fail the stack.
#
# Writes OUT_DIR/<stack>.json (the contract's document), OUT_DIR/<stack>/ (replay.png, summary.md,
# workloads.csv) and OUT_DIR/comment.md. It always finishes, so the comment is posted; the stacks whose
# gate failed (exit 1) or that could not be replayed (exit 2) are listed in OUT_DIR/failed.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/comment.sh"

out="${1:?usage: replay-previews.sh OUT_DIR}"
cli="${AKS_KUEUE:-venv/bin/aks-kueue}"
traces="${REPLAY_TRACES:-traces}"
base="${BASE_REF:-}"
mkdir -p "$out"
: > "$out/failed"
{
  echo "# aks-kueue replay: the stacks' traces against this change and the base"
  echo
  echo "Virtual time, no cluster: each stack's trace (\`$traces/<stack>/\`) ran through the admission core and the node-pool model."
} > "$out/comment.md"

replayed=0
for file in stacks/Pulumi.*.yaml; do
  stack="${file#stacks/Pulumi.}"
  stack="${stack%.yaml}"
  [ -d "$traces/$stack" ] || continue
  replayed=$((replayed + 1))
  compare=()
  if [ -n "$base" ] && git cat-file -e "$base:stacks/Pulumi.$stack.yaml" 2>/dev/null; then
    mkdir -p "$out/base"
    git show "$base:stacks/Pulumi.$stack.yaml" > "$out/base/Pulumi.$stack.yaml"
    compare=(--compare-config "$out/base/Pulumi.$stack.yaml")
  fi
  gate=()
  [ -n "${REPLAY_FAIL_ON_WAIT:-}" ] && gate=(--fail-on-wait "$REPLAY_FAIL_ON_WAIT")
  "$cli" replay "$traces/$stack" --stack "$stack" "${compare[@]}" "${gate[@]}" --out "$out/$stack" --json \
    > "$out/$stack.json" 2> "$out/$stack.stderr"
  code=$?
  echo >> "$out/comment.md"
  if [ "$code" -eq 2 ]; then
    unusable "$stack" replay replayed failed
    continue
  fi
  [ "$code" -eq 0 ] || echo "$stack (exit $code)" >> "$out/failed"
  [ "${#compare[@]}" -eq 0 ] && echo "(No base to compare with: stack \`$stack\` is new, or no base commit was given.)" \
    >> "$out/comment.md"
  cat "$out/$stack/summary.md" >> "$out/comment.md"
done

if [ "$replayed" -eq 0 ]; then
  printf '\nNo stack has a trace under `%s/`: nothing replayed. See docs/replay.md.\n' "$traces" >> "$out/comment.md"
fi
if [ -n "${RUN_URL:-}" ]; then
  printf '\nCharts (`replay.png`) and `workloads.csv` per stack are in the artifacts of [this run](%s).\n' "$RUN_URL" \
    >> "$out/comment.md"
fi
# The previews' part of the comment comes first.
truncate_comment 30000 replay
exit 0
