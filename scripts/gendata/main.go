// Command gendata writes the workloads' deterministic test file, as
// internal/workload/codec generates it, so outside tools can read the very
// same bytes.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/qoslab/qoslab/internal/workload/codec"
)

func main() {
	sizeMiB := flag.Int64("size-mib", 256, "size of the file in MiB")
	seed := flag.Uint64("seed", 1, "seed that picks the bytes")
	ratio := flag.Float64("ratio", codec.DefaultRatio, "compressibility under zstd's default level")
	out := flag.String("o", "", "file to write (required)")
	flag.Parse()
	if err := run(*out, *sizeMiB, *seed, *ratio); err != nil {
		fmt.Fprintln(os.Stderr, "gendata:", err)
		os.Exit(1)
	}
}

func run(path string, sizeMiB int64, seed uint64, ratio float64) error {
	if path == "" {
		return fmt.Errorf("no output file: pass -o FILE")
	}
	if sizeMiB < 1 {
		return fmt.Errorf("size %d MiB: need at least 1", sizeMiB)
	}
	f, err := os.Create(path) //nolint:gosec // G304: the file named on the command line
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 4<<20)
	chunk := make([]byte, 4<<20)
	size := sizeMiB << 20
	for off := int64(0); off < size; off += int64(len(chunk)) {
		part := chunk[:min(int64(len(chunk)), size-off)]
		if err := codec.Generate(part, off, seed, ratio); err != nil {
			_ = f.Close()
			return err
		}
		if _, err := w.Write(part); err != nil {
			_ = f.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
