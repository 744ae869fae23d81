package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// mmulRef returns a*b computed in float64.
func mmulRef(a, b *Matrix16) [256]float64 {
	var c [256]float64
	for i := 0; i < 16; i++ {
		for j := 0; j < 16; j++ {
			var s float64
			for k := 0; k < 16; k++ {
				s += float64(a[i*16+k]) * float64(b[k*16+j])
			}
			c[i*16+j] = s
		}
	}
	return c
}

// checkMMul compares c with the float64 product of a and b.
func checkMMul(t *testing.T, what string, c, a, b *Matrix16) {
	t.Helper()
	want := mmulRef(a, b)
	// Relative to the size of the terms, since a sum of mixed signs can
	// cancel to near zero.
	for i := 0; i < 16; i++ {
		for j := 0; j < 16; j++ {
			var scale float64
			for k := 0; k < 16; k++ {
				scale += math.Abs(float64(a[i*16+k]) * float64(b[k*16+j]))
			}
			if d := math.Abs(float64(c[i*16+j]) - want[i*16+j]); d > 1e-4*scale {
				t.Fatalf("%s: c[%d][%d] = %v, want %v (|a|*|b| = %v)", what, i, j, c[i*16+j], want[i*16+j], scale)
			}
		}
	}
}

func randomMatrices(seed uint64) (a, b *Matrix16) {
	rng := rand.New(rand.NewPCG(seed, 1))
	a, b = new(Matrix16), new(Matrix16)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
		b[i] = float32(rng.Float64()*4 - 2)
	}
	return a, b
}

// asymmetricMatrices returns matrices whose every element is distinct and
// whose products change under transposition or swapped operands.
func asymmetricMatrices() (a, b *Matrix16) {
	a, b = new(Matrix16), new(Matrix16)
	for i := 0; i < 16; i++ {
		for j := 0; j < 16; j++ {
			a[i*16+j] = float32(i*16+j+1) / 256       // grows along rows
			b[i*16+j] = float32(j*j) - float32(3*i)/7 // nonlinear in both
		}
	}
	return a, b
}

func testMMulKernel(t *testing.T, name string, mmul func(n uint64, c, a, b *Matrix16)) {
	t.Helper()
	for seed := uint64(1); seed <= 5; seed++ {
		a, b := randomMatrices(seed)
		c := new(Matrix16)
		mmul(3, c, a, b)
		checkMMul(t, name+" random", c, a, b)
	}

	a, b := asymmetricMatrices()
	c := new(Matrix16)
	mmul(1, c, a, b)
	checkMMul(t, name+" asymmetric", c, a, b)
	// The test must be able to fail: a^T*b, a*b^T and b*a differ from a*b.
	at, bt := new(Matrix16), new(Matrix16)
	for i := 0; i < 16; i++ {
		for j := 0; j < 16; j++ {
			at[i*16+j], bt[i*16+j] = a[j*16+i], b[j*16+i]
		}
	}
	want := mmulRef(a, b)
	for _, wrong := range [][256]float64{mmulRef(at, b), mmulRef(a, bt), mmulRef(b, a), mmulRef(at, bt)} {
		same := true
		for i := range want {
			if math.Abs(wrong[i]-want[i]) > 1e-3*math.Max(1, math.Abs(want[i])) {
				same = false
				break
			}
		}
		if same {
			t.Fatal("asymmetric matrices do not tell a transposed product apart")
		}
	}

	// n = 0 leaves c alone; identity times b is b.
	c = new(Matrix16)
	c[5] = 42
	mmul(0, c, a, b)
	if *c != (Matrix16{5: 42}) {
		t.Errorf("%s: MMul(0) wrote c", name)
	}
	id := new(Matrix16)
	for i := 0; i < 16; i++ {
		id[i*16+i] = 1
	}
	mmul(2, c, id, b)
	if *c != *b {
		t.Errorf("%s: identity*b != b", name)
	}
}

func TestMMulGo(t *testing.T) {
	testMMulKernel(t, "go", mmulGoN)
}

func TestMMul(t *testing.T) {
	if err := MMulInit(); err != nil {
		t.Fatalf("MMulInit: %v", err)
	}
	t.Logf("MMulImpl() = %q", MMulImpl())
	testMMulKernel(t, MMulImpl(), MMul)

	a, b := randomMatrices(9)
	c := new(Matrix16)
	if n := testing.AllocsPerRun(20, func() { MMul(100, c, a, b) }); n != 0 {
		t.Errorf("MMul allocates %v times per call", n)
	}
}
