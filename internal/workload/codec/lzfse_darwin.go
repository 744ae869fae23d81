package codec

import (
	"fmt"
	"io"
	"sync"

	"github.com/ebitengine/purego"
)

const libcompressionPath = "/usr/lib/libcompression.dylib"

// libStreamBufferSize is the size of each of a stream's input and output
// buffers: big enough that the per-call overhead does not show.
const libStreamBufferSize = 256 << 10

// libcompression binds the stream functions once per process.
var libcompression = sync.OnceValues(func() (*streamFuncs, error) {
	lib, err := purego.Dlopen(libcompressionPath, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", libcompressionPath, err)
	}
	var f streamFuncs
	for name, fn := range map[string]any{
		"compression_stream_init":    &f.init,
		"compression_stream_process": &f.process,
		"compression_stream_destroy": &f.destroy,
	} {
		sym, err := purego.Dlsym(lib, name)
		if err != nil {
			return nil, fmt.Errorf("find %s in %s: %w", name, libcompressionPath, err)
		}
		purego.RegisterFunc(fn, sym)
	}
	return &f, nil
})

func newLZFSEEncoder(w io.Writer) (io.WriteCloser, error) {
	f, err := libcompression()
	if err != nil {
		return nil, err
	}
	return newLibStreamEncoder(f, w, libStreamBufferSize)
}

func newLZFSEDecoder(r io.Reader) (io.ReadCloser, error) {
	f, err := libcompression()
	if err != nil {
		return nil, err
	}
	return newLibStreamDecoder(f, r, libStreamBufferSize)
}
