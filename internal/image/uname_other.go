//go:build !unix

package image

import "errors"

func unameRelease() (string, error) {
	return "", errors.New("the running kernel's release is only known on Unix")
}
