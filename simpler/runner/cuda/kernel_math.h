// The arithmetic of the CUDA runner's work kernels: what one GPU thread computes.
//
// kernels.cu's __global__ kernels only compute their thread index, bounds-check it and
// call one of these. The same functions, compiled by a plain C++17 compiler, run in the
// fake driver (tests/fake_cuda) and in tests/ut/test_cuda_kernel_math.py, which checks
// them against numpy: so what the tests check is what the GPU runs.
//
// kernels.fatbin is built from this file too: rebuild it after an edit (`nox -s cuda_kernels`).
#ifndef SIMPLER_KERNEL_MATH_H
#define SIMPLER_KERNEL_MATH_H

#include <math.h>  // exp, fmax for double: nvcc's device versions, the C library's on the host

#ifdef __CUDACC__
#define SIMPLER_HOST_DEVICE __host__ __device__
#else
#define SIMPLER_HOST_DEVICE  // a host-only build: plain functions
#endif

namespace kernel_math {

// Thread i of n: out[i] = a[i] + b[i].
template <typename T>
SIMPLER_HOST_DEVICE inline void vector_add(const T* a, const T* b, T* out, long long i) {
    out[i] = a[i] + b[i];
}

// Thread i of n: out[i] = a[i] * alpha.
template <typename T>
SIMPLER_HOST_DEVICE inline void scale(const T* a, T alpha, T* out, long long i) {
    out[i] = a[i] * alpha;
}

// Thread i of m * n: element (i / n, i % n) of a (m x k) @ b (k x n), row-major. The dot
// product is summed in double and rounded once, so it is as close to the exact product as
// a float32 can be (each float product is exact in double). k == 0 gives 0.
SIMPLER_HOST_DEVICE inline void matmul_f32(const float* a, const float* b, float* out,
                                           long long k, long long n, long long i) {
    long long row = i / n, col = i % n;
    double sum = 0.0;
    for (long long j = 0; j < k; ++j) sum += double(a[row * k + j]) * double(b[j * n + col]);
    out[i] = float(sum);
}

// Thread r of rows: softmax of row r (cols > 0 elements, the runner refuses an empty last
// axis), shifted by the row's maximum so that exp cannot overflow; exponentials and their
// sum in double, each output rounded once.
SIMPLER_HOST_DEVICE inline void softmax_row_f32(const float* x, float* out, long long cols,
                                                long long r) {
    const float* in = x + r * cols;
    double peak = in[0];
    for (long long c = 1; c < cols; ++c) peak = fmax(peak, double(in[c]));
    double total = 0.0;
    for (long long c = 0; c < cols; ++c) total += exp(double(in[c]) - peak);
    for (long long c = 0; c < cols; ++c) out[r * cols + c] = float(exp(double(in[c]) - peak) / total);
}

}  // namespace kernel_math

#endif  // SIMPLER_KERNEL_MATH_H
