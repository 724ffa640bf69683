// The CUDA runner's work kernels on the host, for tests/ut/test_cuda_kernel_math.py: each
// extern "C" function is one launch of the kernels.cu kernel of the same name, on a 1-D grid
// of `blocks` blocks of `block` threads. kernels.cu itself is compiled here (cuda_on_host.h
// makes it plain C++), so its index arithmetic, bounds checks and the kernel_math.h
// functions its threads call are what the test checks.
#include "cuda_on_host.h"
#include "kernels.cu"

#define HOST_ELEMENTWISE(suffix, T)                                                         \
    extern "C" void host_vector_add_##suffix(unsigned blocks, unsigned block, const T* a,  \
                                             const T* b, T* out, long long n) {            \
        host_launch(simpler_vector_add_##suffix, blocks, block, a, b, out, n);              \
    }                                                                                      \
    extern "C" void host_scale_##suffix(unsigned blocks, unsigned block, const T* a,       \
                                        T alpha, T* out, long long n) {                    \
        host_launch(simpler_scale_##suffix, blocks, block, a, alpha, out, n);               \
    }

HOST_ELEMENTWISE(f32, float)
HOST_ELEMENTWISE(f64, double)
HOST_ELEMENTWISE(i32, int)
HOST_ELEMENTWISE(i64, long long)

extern "C" void host_matmul_f32(unsigned blocks, unsigned block, const float* a,
                                const float* b, float* out, long long m, long long k,
                                long long n) {
    host_launch(simpler_matmul_f32, blocks, block, a, b, out, m, k, n);
}

extern "C" void host_softmax_f32(unsigned blocks, unsigned block, const float* x, float* out,
                                 long long rows, long long cols) {
    host_launch(simpler_softmax_f32, blocks, block, x, out, rows, cols);
}
