//go:build !unix

package image

func lockImage(store, name string) (func(), error) { return func() {}, nil }
