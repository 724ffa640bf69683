// Just enough of CUDA's device language for simpler/runner/cuda/kernels.cu to compile as
// plain C++17 on the host, and a launch that runs a kernel's threads one after another.
// Included before kernels.cu by the CPU kernel tests (host_kernels.cpp) and by the fake
// driver (tests/fake_cuda), so both run the __global__ kernels kernels.cu holds, index
// arithmetic and bounds checks included, not a copy of them.
#ifndef SIMPLER_CUDA_ON_HOST_H
#define SIMPLER_CUDA_ON_HOST_H

#include <cstdlib>

#define __global__
#define __device__
#define __host__

struct HostDim3 {
    unsigned x = 0, y = 0, z = 0;
};

// Per host thread, as each GPU thread has its own: launches on two host threads (the
// fake driver serves several) never see each other's indices.
inline thread_local HostDim3 blockIdx, blockDim, threadIdx, gridDim;

// A trap ends the kernel with an error on a GPU; a host build never launches the trap kernel.
inline void __trap() { std::abort(); }

// Runs `kernel(args...)` once per thread of a 1-D launch of `grid` blocks of `block`
// threads, numbered as a GPU numbers them.
template <typename... Params, typename... Args>
void host_launch(void (*kernel)(Params...), unsigned grid, unsigned block, Args... args) {
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    for (unsigned b = 0; b < grid; ++b) {
        for (unsigned t = 0; t < block; ++t) {
            blockIdx = {b, 0, 0};
            threadIdx = {t, 0, 0};
            kernel(args...);
        }
    }
}

#endif  // SIMPLER_CUDA_ON_HOST_H
