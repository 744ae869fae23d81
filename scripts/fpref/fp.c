/*
 * fp.c: the C reference of qoslab's fp workload (internal/workload/kernel.FP).
 *
 * Same loop as the Go assembly: four independent chains x = x*0.5 + 1.0,
 * starting from 0, 1, 3 and 6, returning (x0+x1)+(x2+x3). Built with
 * gcc -O2 (no -march, no -ffast-math) the loop is MULSD+ADDSD on registers on
 * amd64; on arm64 gcc contracts each step into FMADD, as the Go assembly does.
 *
 * usage: fp N        runs N iterations, prints "<loops/s> loops/s <result>"
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
/* noipa: neither inline nor specialise on the constant arguments. */
#define NOINLINE __attribute__((noipa))
#endif

/*
 * m and k come in as arguments (from volatile globals) so the compiler must
 * keep them in registers rather than fold them into memory operands or
 * rewrite x*0.5 as something else.
 */
NOINLINE double fp(uint64_t n, double m, double k) {
	double x0 = 0.0, x1 = 1.0, x2 = 3.0, x3 = 6.0;
	for (; n > 0; n--) {
		x0 = x0 * m + k;
		x1 = x1 * m + k;
		x2 = x2 * m + k;
		x3 = x3 * m + k;
	}
	return (x0 + x1) + (x2 + x3);
}

static volatile double fp_mul = 0.5, fp_add = 1.0;

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: %s N\n", argv[0]);
		return 2;
	}
	char *end;
	uint64_t n = strtoull(argv[1], &end, 10);
	if (*end != '\0' || n == 0) {
		fprintf(stderr, "fp: bad iteration count %s\n", argv[1]);
		return 2;
	}
	double m = fp_mul, k = fp_add;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	double r = fp(n, m, k);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	printf("%.0f loops/s %.17g\n", (double)n / s, r);
	return 0;
}
