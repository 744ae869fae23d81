package kernel

// fpFused says whether the FP kernel on this architecture fuses the multiply
// and add of each step into one rounding (FMADD on arm64).
const fpFused = true
