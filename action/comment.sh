#!/usr/bin/env bash
# Posts the summary as the PR's latgen comment, or updates it, for the action's comment
# mode (action.yml): one comment per PR, found by the marker the summary starts with and
# by its author (anyone can post a comment that starts with the marker). It runs none of
# the PR's files, only GitHub's CLI on the summary.
#
# Reads: LATGEN_SUMMARY (the file), LATGEN_AUTHOR (the login of the token's user,
# github-actions[bot] for the workflow's token), PR, REPO and GH_TOKEN.
set -euo pipefail

summary="${LATGEN_SUMMARY:?}"
author="${LATGEN_AUTHOR:?}"
# The login goes into a jq filter: a GitHub login, or an app's `name[bot]`, only.
if ! [[ "$author" =~ ^[A-Za-z0-9-]+(\[bot\])?$ ]]; then
  echo "::error title=latgen::comment-author '$author' is not a GitHub login"
  exit 2
fi
[ -s "$summary" ] || { echo "::warning title=latgen::no summary to post"; exit 0; }
mine=".[] | select(.user.login == \"$author\"
  and (.body | startswith(\"<!-- latgen -->\"))) | .id"
id=$(gh api "repos/$REPO/issues/$PR/comments" --paginate --jq "$mine" | head -n 1)
if [ -n "$id" ]; then
  gh api -X PATCH "repos/$REPO/issues/comments/$id" -F "body=@$summary" > /dev/null
else
  gh api -X POST "repos/$REPO/issues/$PR/comments" -F "body=@$summary" > /dev/null
fi
