// Vector widths for the CPU kernels. A function marked DISTTRAIN_CPU_CLONES is compiled for
// AVX-512, AVX2 and baseline x86-64 (SSE2), and the dynamic loader picks the widest one the
// machine runs (function multi-versioning through an ifunc): one binary, no -march. The kernels'
// files are built with -ffp-contract=off, so no version fuses a multiply and an add: every
// version rounds like the plain loop, and results are bit-identical on every machine.
// Measured (docs/notes/trainer-data-path.md): the async update of a 64 MiB push 12.3 GB/s with SSE2
// and 14.7 with AVX-512 (trainer_bench --only update); the Fashion-MNIST MLP (trainer/models, also
// marked) 33-35k examples/s against 39-41k with one worker and one ps, the same loss to the bit.
#ifndef DISTTRAIN_TRAINER_KERNELS_CPU_CLONES_H_
#define DISTTRAIN_TRAINER_KERNELS_CPU_CLONES_H_

// Not under ThreadSanitizer: the ifunc resolver runs while the dynamic loader relocates, before
// TSan's runtime exists, and its instrumented entry crashes there (scripts/sanitize.sh).
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define DISTTRAIN_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DISTTRAIN_CPU_CLONES
#endif

#endif  // DISTTRAIN_TRAINER_KERNELS_CPU_CLONES_H_
