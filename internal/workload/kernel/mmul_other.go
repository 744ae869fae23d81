//go:build !darwin

package kernel

// MMulInit prepares MMul. Outside darwin MMul is plain Go and MMulInit
// always returns nil; on darwin it loads Accelerate and returns the error if
// that fails.
func MMulInit() error { return nil }

// MMulImpl names the implementation MMul uses: "go" here, "vDSP_mmul" on
// darwin.
func MMulImpl() string { return "go" }

// MMul sets c = a*b, n times over (every repetition computes the same c).
// c must not alias a or b. Outside darwin it is a Go loop.
func MMul(n uint64, c, a, b *Matrix16) { mmulGoN(n, c, a, b) }
