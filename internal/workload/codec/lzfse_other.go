//go:build !darwin

package codec

import (
	"errors"
	"io"
)

// checkCodec refuses lzfse here first; these are a second line of defence.
func newLZFSEEncoder(io.Writer) (io.WriteCloser, error) {
	return nil, errors.New("codec \"lzfse\" needs macOS libcompression")
}

func newLZFSEDecoder(io.Reader) (io.ReadCloser, error) {
	return nil, errors.New("codec \"lzfse\" needs macOS libcompression")
}
