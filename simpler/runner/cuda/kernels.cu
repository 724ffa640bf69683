// The CUDA runner's kernels (cudacard.cpp launches them by these extern "C" names).
//
// Rebuild kernels.fatbin after editing this file or kernel_math.h: `nox -s cuda_kernels`
// (nvcc from a CUDA 13 toolkit). A unit test fails when kernels.fatbin no longer matches them.
//
// The work kernels' arithmetic lives in kernel_math.h. The tests also build this whole file
// for the host (tests/host_kernels/cuda_on_host.h) and launch its kernels there. They compute
// what the simulated card's kernels compute, so the scene suite's goldens hold on both. The
// fault kernels each end in a real device fault that leaves the context sticky-errored:
// every later call in the process returns the same error.
#include <cassert>

#include "kernel_math.h"

extern "C" __global__ void simpler_noop() {}

// Runs until `ns` nanoseconds of the GPU's global timer have passed: a kernel that
// outlives the op-timeout, bounded so that a forgotten one still ends by itself.
extern "C" __global__ void simpler_spin(unsigned long long ns) {
#ifdef __CUDA_ARCH__  // %globaltimer is the GPU's: a host build of this file has no spin
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
#else
    (void)ns;
#endif
}

// The thread's index in the launch's x-extent (the runner launches 1-D grids).
__device__ inline long long thread_index() {
    return blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
}

// Each work kernel: one call of kernel_math.h per thread, threads past the data do nothing.
#define SIMPLER_ELEMENTWISE(suffix, T)                                                         \
    extern "C" __global__ void simpler_vector_add_##suffix(const T* a, const T* b, T* out,   \
                                                           long long n) {                    \
        long long i = thread_index();                                                        \
        if (i < n) kernel_math::vector_add(a, b, out, i);                                    \
    }                                                                                        \
    extern "C" __global__ void simpler_scale_##suffix(const T* a, T alpha, T* out,          \
                                                      long long n) {                         \
        long long i = thread_index();                                                        \
        if (i < n) kernel_math::scale(a, alpha, out, i);                                     \
    }

SIMPLER_ELEMENTWISE(f32, float)
SIMPLER_ELEMENTWISE(f64, double)
SIMPLER_ELEMENTWISE(i32, int)
SIMPLER_ELEMENTWISE(i64, long long)

// One thread per output element.
extern "C" __global__ void simpler_matmul_f32(const float* a, const float* b, float* out,
                                              long long m, long long k, long long n) {
    long long i = thread_index();
    if (i < m * n) kernel_math::matmul_f32(a, b, out, k, n, i);
}

// One thread per row of the last axis.
extern "C" __global__ void simpler_softmax_f32(const float* x, float* out, long long rows,
                                               long long cols) {
    long long r = thread_index();
    if (r < rows) kernel_math::softmax_row_f32(x, out, cols, r);
}

// --- fault kernels: each leaves the context sticky-errored -------------------------------

// A store through an address no allocation maps: CUDA_ERROR_ILLEGAL_ADDRESS (700).
extern "C" __global__ void simpler_illegal_address(int* unmapped) {
    *reinterpret_cast<volatile int*>(unmapped) = 1;
}

// The trap instruction: CUDA_ERROR_LAUNCH_FAILED (719) on the GPUs we know of.
extern "C" __global__ void simpler_trap() { __trap(); }

// A failed device-side assert: CUDA_ERROR_ASSERT (710). `expected` is 0 at the launch; a
// parameter, so the compiler cannot prove the assert away.
extern "C" __global__ void simpler_device_assert(int expected) { assert(expected == 1); }

// A 4-byte load from an address 1 byte into a valid allocation:
// CUDA_ERROR_MISALIGNED_ADDRESS (716).
extern "C" __global__ void simpler_misaligned(char* valid, int* sink) {
    *sink = *reinterpret_cast<volatile int*>(valid + 1);
}
