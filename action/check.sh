#!/usr/bin/env bash
# Runs `latgen check --base` for the action (action.yml) three ways: annotations on the
# PR's files (the job log), SARIF for code scanning, and the markdown summary the comment
# job posts (also shown on the run's summary page). It exits 0 whatever latgen finds, and
# writes the check's exit code to the step's outputs: the action's last step fails the job
# on it, after the SARIF and the summary are kept.
#
# Reads: LATGEN_BASE (the revision to compare with; default origin/<the PR's base
# branch>), LATGEN_SARIF and LATGEN_SUMMARY (files to write; empty = none), and the
# runner's GITHUB_BASE_REF, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY.
set -uo pipefail

base="${LATGEN_BASE:-}"
if [ -z "$base" ]; then
  if [ -z "${GITHUB_BASE_REF:-}" ]; then
    echo "::error title=latgen::no base to compare with: set the action's base input outside pull requests"
    exit 2
  fi
  base="origin/$GITHUB_BASE_REF"
fi

latgen check --format github --base "$base"
code=$?
echo "exit-code=$code" >> "${GITHUB_OUTPUT:?}"
if [ "$code" -gt 1 ]; then
  # latgen could not run (its message is above): no report to keep.
  exit "$code"
fi

# Exit 1 (findings) still writes a full report; anything else fails the step.
report() {
  latgen check --format "$1" --base "$base" > "$2"
  local rc=$?
  [ "$rc" -le 1 ] || exit "$rc"
}
if [ -n "${LATGEN_SARIF:-}" ]; then
  report sarif "$LATGEN_SARIF"
  echo "sarif=$LATGEN_SARIF" >> "$GITHUB_OUTPUT"
fi
if [ -n "${LATGEN_SUMMARY:-}" ]; then
  report markdown "$LATGEN_SUMMARY"
  echo "summary=$LATGEN_SUMMARY" >> "$GITHUB_OUTPUT"
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    cat "$LATGEN_SUMMARY" >> "$GITHUB_STEP_SUMMARY"
  fi
fi
exit 0
