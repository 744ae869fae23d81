module github.com/Code-Hex/vz/v3

go 1.22.0

toolchain go1.23.4

require (
	github.com/Code-Hex/go-infinity-channel v1.0.0
	golang.org/x/crypto v0.31.0
	golang.org/x/mod v0.22.0
)

require golang.org/x/sys v0.28.0 // indirect
