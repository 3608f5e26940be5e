/* The vector kernels of _rff.pyx: the random Fourier feature map (Park 2022, eq. 4.5) and
 * the gradient flow of the support function on it (eq. 5.2).
 *
 * Written with GCC/clang vector extensions on 16 floats (GCC 9 and later, clang; not
 * MSVC, where setup.py skips this module and the numpy path _rff_numpy.py serves), and
 * cloned for each vector width (_simd.h). Built with -ffp-contract=off: no product is
 * fused into an add, so every operation rounds once, as in the numpy path, bit for bit. Every operation on a row's values is lane-wise or a reduction within
 * that row in a fixed order: a row's result never depends on the other rows it is
 * computed with, bit for bit, which the private mode's stability histogram needs. */
#ifndef PRIVKIT_RFF_SIMD_H
#define PRIVKIT_RFF_SIMD_H
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "_simd.h"

/* inlined into each clone, so compiled at its width */
#define PK_INLINE static inline __attribute__((always_inline))

#define PK_LANES 16 /* floats per vector; callers pad the frequencies to a multiple */
#define PK_ROWS 4   /* rows per block of pk_descend; callers pad the rows to a multiple */

typedef float pk_vf __attribute__((vector_size(4 * PK_LANES), aligned(4)));
typedef int pk_vi __attribute__((vector_size(4 * PK_LANES), aligned(4)));
typedef float pk_vf8 __attribute__((vector_size(32), aligned(4)));
typedef double pk_vd __attribute__((vector_size(8 * PK_LANES), aligned(8)));

/* vectors are passed by pointer: clang refuses 64-byte vector arguments in the clones
 * without AVX-512 (an ABI change), even to functions it inlines */
#define PK_LOAD(v, p) memcpy(&(v), (p), sizeof(v))
#define PK_STORE(p, v) memcpy((p), &(v), sizeof(v))

/* sin and cos of every lane, for |x| <= 1e5: Cody-Waite reduction by pi/2 (pi/2 split
 * in three floats, the first two with few enough bits that n times them is exact for
 * |n| < 2^16) and Cephes' sinf/cosf minimax polynomials on [-pi/4, pi/4] (Moshier,
 * "Methods and programs for mathematical functions", 1989), about 1e-7 relative. Lanes
 * with |x| > 1e5 or NaN are flagged in *wide. */
PK_INLINE void pk_sincos(const pk_vf *xp, pk_vf *sin_out, pk_vf *cos_out, pk_vi *wide)
{
    pk_vf x = *xp;
    const pk_vf shift = (pk_vf){0} + 12582912.0f; /* 1.5 2^23: adding it rounds to integer */
    pk_vf big = x * 0.636619772367581343f + shift;
    pk_vf n = big - shift;
    pk_vi q;
    memcpy(&q, &big, sizeof q); /* n mod 4 in the low bits (two's complement) */
    pk_vf r = ((x - n * 1.5703125f) - n * 4.837512969970703125e-4f)
              - n * 7.54978995489188216e-8f;
    pk_vf r2 = r * r;
    pk_vf s = r + r * r2 * (-1.6666654611e-1f + r2 * (8.3321608736e-3f
                                                   + r2 * -1.9515295891e-4f));
    pk_vf c = 1.0f - 0.5f * r2 + r2 * r2 * (4.166664568298827e-2f
              + r2 * (-1.388731625493765e-3f + r2 * 2.443315711809948e-5f));
    pk_vi si, ci, ax;
    memcpy(&si, &s, sizeof si);
    memcpy(&ci, &c, sizeof ci);
    memcpy(&ax, &x, sizeof ax);
    /* sin x = (s, c, -s, -c) and cos x = sin(x + pi/2) = (c, -s, -c, s) by quadrant */
    pk_vi odd = -(q & 1), q1 = q + 1, odd1 = -(q1 & 1);
    pk_vi so = ((si & ~odd) | (ci & odd)) ^ ((q & 2) << 30);
    pk_vi co = ((si & ~odd1) | (ci & odd1)) ^ ((q1 & 2) << 30);
    memcpy(sin_out, &so, sizeof so);
    memcpy(cos_out, &co, sizeof co);
    *wide |= (ax & 0x7fffffff) > 0x47c35000; /* the bits of 1e5f; NaN is above */
}

/* the lanes' sum in a fixed order: lane l plus lane l + 8, then l + 4, l + 2, l + 1
 * (by lane subscripts rather than __builtin_shufflevector, which GCC has only from 12) */
PK_INLINE float pk_hsum(const pk_vf *v)
{
    pk_vf8 a;
    for (int l = 0; l < 8; l++)
        a[l] = (*v)[l] + (*v)[l + 8];
    return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}

/* n_iter steps of x <- x + sum_j sin(<w_j, x> - theta_j) step_j from every row of x
 * (n rows of d, n a multiple of PK_ROWS), in blocks of PK_ROWS rows.
 *   phase: (d + 1) x h, the frequencies' coordinates by row, then -theta;
 *   steps: 2 x d x h, the steps before and from step `decay_from` on;
 *   h a multiple of PK_LANES (zero-padded);
 *   work: 2 PK_ROWS h floats.
 * A row whose phases leave [-1e5, 1e5] in a step takes libm's sinf for that step. */
PK_CLONES static void pk_descend(const float *restrict phase,
                                     const float *restrict steps, float *restrict x,
                                     ptrdiff_t n, ptrdiff_t d, ptrdiff_t h, long n_iter,
                                     long decay_from, float *restrict work)
{
    const float *theta = phase + d * h;
    float *sines = work, *phases = work + PK_ROWS * h;
    for (ptrdiff_t i = 0; i < n; i += PK_ROWS) {
        float *xb = x + i * d;
        for (long t = 0; t < n_iter; t++) {
            const float *st = steps + (t >= decay_from ? d * h : 0);
            pk_vi wide[PK_ROWS];
            memset(wide, 0, sizeof wide);
            for (ptrdiff_t c = 0; c < h; c += PK_LANES) {
                pk_vf acc[PK_ROWS], unused;
                pk_vf th;
                PK_LOAD(th, theta + c);
                for (int r = 0; r < PK_ROWS; r++)
                    acc[r] = th;
                for (ptrdiff_t k = 0; k < d; k++) {
                    pk_vf wv;
                    PK_LOAD(wv, phase + k * h + c);
                    for (int r = 0; r < PK_ROWS; r++)
                        acc[r] += xb[r * d + k] * wv;
                }
                for (int r = 0; r < PK_ROWS; r++) {
                    pk_vf s;
                    PK_STORE(phases + r * h + c, acc[r]);
                    pk_sincos(&acc[r], &s, &unused, &wide[r]);
                    PK_STORE(sines + r * h + c, s);
                }
            }
            for (int r = 0; r < PK_ROWS; r++) {
                int any = 0;
                for (int l = 0; l < PK_LANES; l++)
                    any |= wide[r][l];
                if (any)
                    for (ptrdiff_t j = 0; j < h; j++)
                        sines[r * h + j] = sinf(phases[r * h + j]);
            }
            for (ptrdiff_t k = 0; k < d; k++) {
                pk_vf g[PK_ROWS];
                const float *sk = st + k * h;
                for (int r = 0; r < PK_ROWS; r++)
                    g[r] = (pk_vf){0};
                for (ptrdiff_t c = 0; c < h; c += PK_LANES) {
                    pk_vf sv, sr;
                    PK_LOAD(sv, sk + c);
                    for (int r = 0; r < PK_ROWS; r++) {
                        PK_LOAD(sr, sines + r * h + c);
                        g[r] += sr * sv;
                    }
                }
                for (int r = 0; r < PK_ROWS; r++)
                    xb[r * d + k] += pk_hsum(&g[r]);
            }
        }
    }
}

/* Each row of out (n x 2h) becomes [cos p, sin p] / ||[cos p, sin p]|| for its row p of
 * proj (n x h): p reduced to [-pi, pi] in double, the trigonometry in float (pk_sincos),
 * the norm and the division in double. A row with a projection beyond 2^50 in absolute
 * value (or not finite) takes libm's double cos and sin instead. */
PK_CLONES static void pk_features(const double *restrict proj, double *restrict out,
                                      ptrdiff_t n, ptrdiff_t h)
{
    const double inv_two_pi = 0.15915494309189535, two_pi = 6.283185307179586;
    const pk_vd shift = (pk_vd){0} + 6755399441055744.0; /* 1.5 2^52: rounds to integer */
    for (ptrdiff_t i = 0; i < n; i++) {
        const double *p = proj + i * h;
        double *o = out + i * 2 * h;
        double total = 0.0;
        pk_vd sq = {0.0};
        pk_vi wide = {0};
        for (ptrdiff_t c = 0; c < h; c += PK_LANES) {
            ptrdiff_t len = h - c < PK_LANES ? h - c : PK_LANES;
            pk_vd v = {0.0};
            memcpy(&v, p + c, len * sizeof(double));
            pk_vd turns = (v * inv_two_pi + shift) - shift;
            pk_vf reduced = __builtin_convertvector(v - turns * two_pi, pk_vf), s, co;
            pk_sincos(&reduced, &s, &co, &wide);
            pk_vd sd = __builtin_convertvector(s, pk_vd), cd = __builtin_convertvector(co, pk_vd);
            for (int l = (int)len; l < PK_LANES; l++)
                sd[l] = cd[l] = 0.0;
            sq += cd * cd + sd * sd;
            memcpy(o + c, &cd, len * sizeof(double));
            memcpy(o + h + c, &sd, len * sizeof(double));
        }
        int any = 0;
        for (int l = 0; l < PK_LANES; l++)
            any |= wide[l];
        for (ptrdiff_t j = 0; j < h; j++)
            any |= !(fabs(p[j]) <= 0x1p50);
        if (any) {
            sq = (pk_vd){0.0};
            for (ptrdiff_t j = 0; j < h; j++) {
                o[j] = cos(p[j]);
                o[h + j] = sin(p[j]);
                sq[0] += o[j] * o[j] + o[h + j] * o[h + j];
            }
        }
        for (int l = 0; l < PK_LANES; l++)
            total += sq[l];
        double norm = sqrt(total);
        for (ptrdiff_t j = 0; j < 2 * h; j++)
            o[j] /= norm;
    }
}

#endif
