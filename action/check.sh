#!/usr/bin/env bash
# Runs `latgen check --base` for the action (action.yml) three ways: annotations on the
# PR's files (the job log), SARIF for code scanning, and the markdown summary the comment
# job posts (also shown on the run's summary page). It exits 0 whatever latgen finds, and
# writes the check's exit code to the step's outputs: the action's last step fails the job
# on it, after the SARIF and the summary are kept.
#
# It runs from the repository's root, naming the project's apps folder, so that every
# path latgen reports is relative to the repository, as annotations and SARIF need.
#
# Reads: LATGEN_PROJECT (the project folder, relative to the repository; default .),
# LATGEN_BASE (the revision to compare with; default origin/<the PR's base branch>),
# LATGEN_SARIF and LATGEN_SUMMARY (files to write, outside the checkout: the PR's files
# are untrusted; empty = none), and the runner's GITHUB_BASE_REF, GITHUB_OUTPUT and
# GITHUB_STEP_SUMMARY.
set -uo pipefail

fail() {
  echo "::error title=latgen::$1"
  exit 2
}

project="${LATGEN_PROJECT:-.}"
project="${project%/}"
case "$project" in
  /* | .. | ../* | */../* | */..) fail "working-directory '$project' is not a folder of the repository" ;;
  # It becomes latgen's first argument: one starting with `-` would be read as an option.
  -*) fail "working-directory '$project' starts with '-': name the folder as ./$project" ;;
  . | "") apps=apps ;;
  *) apps="$project/apps" ;;
esac

# A project with environments (environments/*.yaml) is checked in every one of them, and
# between them.
envs=()
if compgen -G "$(dirname "$apps")/environments/*.yaml" > /dev/null; then
  envs=(--env all)
fi

base="${LATGEN_BASE:-}"
if [ -z "$base" ]; then
  [ -n "${GITHUB_BASE_REF:-}" ] ||
    fail "no base to compare with: set the action's base input outside pull requests"
  base="origin/$GITHUB_BASE_REF"
fi

latgen check "$apps" ${envs[@]+"${envs[@]}"} --format github --base "$base"
code=$?
echo "exit-code=$code" >> "${GITHUB_OUTPUT:?}"
if [ "$code" -gt 1 ]; then
  # latgen could not run (its message is above): no report to keep.
  exit "$code"
fi

# Exit 1 (findings) still writes a full report; anything else fails the step. The file is
# created first, and never through a symbolic link, so that a failed redirect is not
# taken for findings.
report() {
  [ ! -L "$2" ] || fail "$2 is a symbolic link: not writing the report through it"
  : > "$2" || fail "cannot write $2"
  latgen check "$apps" ${envs[@]+"${envs[@]}"} --format "$1" --base "$base" > "$2"
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
