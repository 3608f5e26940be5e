/* The two vector kernels of _hull.pyx, cloned for each vector width (_simd.h). */
#ifndef PRIVKIT_HULL_SIMD_H
#define PRIVKIT_HULL_SIMD_H
#include <stddef.h>

#include "_simd.h"

/* 8 doubles: one AVX-512 register, two AVX2 ones, four SSE2 ones */
typedef double pk_v8 __attribute__((vector_size(64), aligned(8)));
typedef double pk_v4 __attribute__((vector_size(32), aligned(8)));
typedef double pk_v2 __attribute__((vector_size(16), aligned(8)));

/* sum_i a[i] b[i], in 16 independent partial sums (one chain of additions would wait on
 * the adder's latency at every step), added in a fixed order at the end */
PK_CLONES static double pk_dot(const double *a, const double *b, ptrdiff_t n)
{
    pk_v8 s0 = {0.0}, s1 = {0.0}, x, y;
    ptrdiff_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __builtin_memcpy(&x, a + i, sizeof x);
        __builtin_memcpy(&y, b + i, sizeof y);
        s0 += x * y;
        __builtin_memcpy(&x, a + i + 8, sizeof x);
        __builtin_memcpy(&y, b + i + 8, sizeof y);
        s1 += x * y;
    }
    s0 += s1;
    pk_v4 h = __builtin_shufflevector(s0, s0, 0, 1, 2, 3)
              + __builtin_shufflevector(s0, s0, 4, 5, 6, 7);
    pk_v2 q = __builtin_shufflevector(h, h, 0, 1) + __builtin_shufflevector(h, h, 2, 3);
    double s = q[0] + q[1];
    for (; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* y[i] += alpha x[i] */
PK_CLONES static void pk_axpy(double alpha, const double *restrict x, double *restrict y,
                              ptrdiff_t n)
{
    for (ptrdiff_t i = 0; i < n; i++)
        y[i] += alpha * x[i];
}

#endif
