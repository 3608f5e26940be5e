/* Function multi-versioning for privkit's compiled kernels (_hull_simd.h, _rff_simd.h):
 * a function marked PK_CLONES is compiled three times by GCC and clang (x86-64-v4:
 * AVX-512; x86-64-v3: AVX2 and FMA; the x86-64 baseline) and the CPU picks one at load
 * time, so one portable build runs at the width of the machine. Elsewhere: plain C. */
#ifndef PRIVKIT_SIMD_H
#define PRIVKIT_SIMD_H

#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define PK_CLONES \
    __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PK_CLONES
#endif

#endif
