//go:build darwin

package kernel

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

const acceleratePath = "/System/Library/Frameworks/Accelerate.framework/Accelerate"

var vdsp struct {
	once sync.Once
	mmul uintptr // address of vDSP_mmul
	err  error
}

// MMulInit loads Accelerate's vDSP_mmul, once; later calls return the first
// call's result at the cost of an atomic load. It returns an error if
// Accelerate cannot be loaded: MMul never falls back to Go on darwin, so the
// caller should call MMulInit first and report the error.
func MMulInit() error {
	vdsp.once.Do(func() {
		lib, err := purego.Dlopen(acceleratePath, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			vdsp.err = fmt.Errorf("mmul: loading Accelerate: %w", err)
			return
		}
		sym, err := purego.Dlsym(lib, "vDSP_mmul")
		if err != nil {
			vdsp.err = fmt.Errorf("mmul: looking up vDSP_mmul in Accelerate: %w", err)
			return
		}
		vdsp.mmul = sym
	})
	return vdsp.err
}

// MMulImpl names the implementation MMul uses: "vDSP_mmul" on darwin, "go"
// elsewhere.
func MMulImpl() string { return "vDSP_mmul" }

// MMul sets c = a*b, n times over (every repetition computes the same c),
// with Accelerate's vDSP_mmul. c must not alias a or b. It panics if
// MMulInit fails; call MMulInit first to get the error instead.
func MMul(n uint64, c, a, b *Matrix16) {
	if err := MMulInit(); err != nil {
		panic(err)
	}
	if n == 0 {
		return
	}
	vdspMMul(n, vdsp.mmul, uintptr(unsafe.Pointer(c)), uintptr(unsafe.Pointer(a)), uintptr(unsafe.Pointer(b))) //nolint:gosec // G103: vDSP reads and writes the matrices through these addresses during the call
}

// vdspArgs recycles the argument arrays of vdspMMul: SyscallN's variadic
// slice escapes, and a fresh one per call would allocate.
var vdspArgs = sync.Pool{New: func() any { return new([9]uintptr) }}

// vdspMMul calls, n times,
//
//	void vDSP_mmul(const float *A, vDSP_Stride IA, const float *B, vDSP_Stride IB,
//	               float *C, vDSP_Stride IC, vDSP_Length M, vDSP_Length N, vDSP_Length P);
//
// with unit strides and M = N = P = 16 (vDSP_Stride is long, vDSP_Length
// unsigned long: each one integer register). go:uintptrescapes makes the
// caller put the matrices it converts to uintptr on the heap (which does not
// move) and keeps them alive until vdspMMul returns, as rule 4 of
// unsafe.Pointer requires.
//
//go:uintptrescapes
//go:noinline
func vdspMMul(n uint64, fn, c, a, b uintptr) {
	args := vdspArgs.Get().(*[9]uintptr)
	*args = [9]uintptr{a, 1, b, 1, c, 1, 16, 16, 16}
	for ; n > 0; n-- {
		purego.SyscallN(fn, args[:]...)
	}
	vdspArgs.Put(args)
}
