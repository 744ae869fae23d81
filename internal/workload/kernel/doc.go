// Package kernel holds the pure hot loops of qoslab's compute workloads.
//
// Every kernel takes an iteration count, does that much work and returns.
// Kernels allocate nothing and have no per-call setup worth measuring, so a
// caller can run them in chunks (say 1<<20 iterations per call) and sample
// the CPU or publish progress between chunks.
//
//   - FP and Int are register-only loops written in assembly on amd64 and
//     arm64 (pure Go elsewhere); fpRef and intRef are the pure-Go
//     references they are tested against.
//   - MMul multiplies two 16x16 float32 matrices n times, with Accelerate's
//     vDSP_mmul on darwin and a Go loop elsewhere.
//   - PiRNG and PiHits are the Monte Carlo estimate of pi.
package kernel
