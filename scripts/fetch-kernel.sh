#!/usr/bin/env bash
# Fetches the guest's Debian kernel into the kernel cache, in Go, with no apt (so on a Mac too): see `qoslab image fetch-kernel --help`.
cd "$(dirname "$0")/.." && exec go run ./cmd/qoslab image fetch-kernel "$@"
