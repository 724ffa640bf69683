// The CUDA runner's kernels (cudacard.cpp launches them by these extern "C" names).
//
// Rebuild kernels.fatbin after editing this file: `nox -s cuda_kernels` (nvcc from a
// CUDA 13 toolkit). A unit test fails when kernels.fatbin no longer matches this file.
//
// The work kernels compute what the simulated card's kernels compute, so the scene suite's
// goldens hold on both. The fault kernels each end in a real device fault that leaves the
// context sticky-errored: every later call in the process returns the same error.
#include <cassert>

extern "C" __global__ void simpler_noop() {}

// Runs until `ns` nanoseconds of the GPU's global timer have passed: a kernel that
// outlives the op-timeout, bounded so that a forgotten one still ends by itself.
extern "C" __global__ void simpler_spin(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

template <typename T>
__device__ void add(const T* a, const T* b, T* out, long long n) {
    long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

template <typename T>
__device__ void scale(const T* a, T alpha, T* out, long long n) {
    long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (i < n) out[i] = a[i] * alpha;
}

#define SIMPLER_ELEMENTWISE(suffix, T)                                                         \
    extern "C" __global__ void simpler_vector_add_##suffix(const T* a, const T* b, T* out,   \
                                                           long long n) {                    \
        add(a, b, out, n);                                                                   \
    }                                                                                        \
    extern "C" __global__ void simpler_scale_##suffix(const T* a, T alpha, T* out,          \
                                                      long long n) {                         \
        scale(a, alpha, out, n);                                                             \
    }

SIMPLER_ELEMENTWISE(f32, float)
SIMPLER_ELEMENTWISE(f64, double)
SIMPLER_ELEMENTWISE(i32, int)
SIMPLER_ELEMENTWISE(i64, long long)

// One thread per output element; the dot product is summed in double and rounded once,
// so the result is as close to the exact product as a float32 can be.
extern "C" __global__ void simpler_matmul_f32(const float* a, const float* b, float* out,
                                              long long m, long long k, long long n) {
    long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (i >= m * n) return;
    long long row = i / n, col = i % n;
    double sum = 0.0;
    for (long long j = 0; j < k; ++j) sum += double(a[row * k + j]) * double(b[j * n + col]);
    out[i] = float(sum);
}

// One thread per row of the last axis: max-shifted, exponentials and sum in double.
extern "C" __global__ void simpler_softmax_f32(const float* x, float* out, long long rows,
                                               long long cols) {
    long long r = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (r >= rows) return;
    const float* in = x + r * cols;
    double peak = in[0];
    for (long long c = 1; c < cols; ++c) peak = fmax(peak, double(in[c]));
    double total = 0.0;
    for (long long c = 0; c < cols; ++c) total += exp(double(in[c]) - peak);
    for (long long c = 0; c < cols; ++c) out[r * cols + c] = float(exp(double(in[c]) - peak) / total);
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
