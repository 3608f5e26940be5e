/* Function multi-versioning for privkit's compiled kernels (_rff_simd.h): a function
 * marked PK_CLONES is compiled three times (x86-64-v4: AVX-512; x86-64-v3: AVX2; the
 * x86-64 baseline) and the CPU picks one at load time, so one portable build runs at the
 * width of the machine (GCC 12 and later by level name; GCC 9 to 11 and clang 14 and
 * later by the levels' defining features), where the loader resolves clones (glibc's
 * ifunc, on Linux); elsewhere one baseline build. The widths compute the
 * same bits: every operation is lane-wise IEEE arithmetic, with no contraction into fused
 * multiply-adds (-ffp-contract=off). */
#ifndef PRIVKIT_SIMD_H
#define PRIVKIT_SIMD_H

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) \
    && __GNUC__ >= 12
#define PK_CLONES \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#elif defined(__x86_64__) && defined(__linux__) \
    && ((defined(__clang__) && __clang_major__ >= 14) || (defined(__GNUC__) && __GNUC__ >= 9))
/* GCC before 12 and clang know the levels' features but not the level names */
#define PK_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PK_CLONES
#endif

#endif
