#!/usr/bin/env bash
# Regenerates internal/agent/agentpb from agent.proto (the generated code is committed).
# Needs protoc (apt-get install protobuf-compiler); installs the pinned Go plugins.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v protoc >/dev/null || { echo "protoc not found: apt-get install protobuf-compiler" >&2; exit 1; }
gobin=$(go env GOPATH)/bin
GOFLAGS='' go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.10
GOFLAGS='' go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1
PATH="$gobin:$PATH" protoc -I internal/agent/agentpb \
  --go_out=internal/agent/agentpb --go_opt=paths=source_relative \
  --go-grpc_out=internal/agent/agentpb --go-grpc_opt=paths=source_relative \
  internal/agent/agentpb/agent.proto
