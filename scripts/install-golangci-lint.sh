#!/usr/bin/env bash
# Installs golangci-lint at the version make lint pins, into bin/tools,
# built from the Go module proxy (the same source as every other module).
# Does nothing when that version is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
version=v2.15.0
bin=bin/tools/golangci-lint
if [ -x "$bin" ] && [[ "$("$bin" version 2>/dev/null)" == *"version ${version#v} "* ]]; then
	exit 0
fi
echo "install: golangci-lint $version -> $bin (built from source: a few minutes)"
GOBIN="$PWD/bin/tools" go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$version"
