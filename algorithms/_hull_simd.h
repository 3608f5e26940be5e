/* The two vector kernels of _hull.pyx, compiled twice by GCC and clang (AVX2 and the
 * x86-64 baseline) and chosen at load time by the CPU (function multi-versioning), so
 * one portable build runs at the width of the machine. Elsewhere: plain C. */
#ifndef PRIVKIT_HULL_SIMD_H
#define PRIVKIT_HULL_SIMD_H
#include <stddef.h>

#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define PK_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PK_CLONES
#endif

/* sum_i a[i] b[i], with four independent partial sums (not one chain of additions) */
PK_CLONES static double pk_dot(const double *a, const double *b, ptrdiff_t n)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    ptrdiff_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++)
        s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

/* y[i] += alpha x[i] */
PK_CLONES static void pk_axpy(double alpha, const double *restrict x, double *restrict y,
                              ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++)
        y[i] += alpha * x[i];
}

#endif
