package kernel

// Matrix16 is a 16x16 float32 matrix in row-major order: element (i, j) is
// at index i*16+j.
type Matrix16 [256]float32

// mmulGo sets c = a*b. It is not inlined so that each of MMul's repetitions
// is a real call that writes c; the compiler cannot fold them into one.
// c must not alias a or b.
//
//go:noinline
func mmulGo(c, a, b *Matrix16) {
	for i := 0; i < 16; i++ {
		var row [16]float32
		ai := a[i*16 : i*16+16 : i*16+16]
		for k, aik := range ai {
			bk := b[k*16 : k*16+16 : k*16+16]
			for j := range row {
				row[j] += aik * bk[j]
			}
		}
		copy(c[i*16:i*16+16], row[:])
	}
}

// mmulGoN runs mmulGo n times.
func mmulGoN(n uint64, c, a, b *Matrix16) {
	for ; n > 0; n-- {
		mmulGo(c, a, b)
	}
}
