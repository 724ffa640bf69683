// The CUDA runner's controls beyond runner.h: where its kernels are, the faults it
// injects, and the measurements scripts/gpu_check.py reads. Plain C types only, and no
// cuda.h: cppyy parses this header on machines that have only the driver.
#ifndef SIMPLER_CUDACARD_H
#define SIMPLER_CUDACARD_H

// Fault kinds for simpler_cuda_add_fault: the fault kernel launched in place of the
// selected test's first launch (SIMPLER_CUDA_HANG: a spin that outlives the op-timeout).
#define SIMPLER_CUDA_ILLEGAL_ADDRESS 1
#define SIMPLER_CUDA_TRAP 2
#define SIMPLER_CUDA_DEVICE_ASSERT 3
#define SIMPLER_CUDA_MISALIGNED 4
#define SIMPLER_CUDA_HANG 5

namespace simpler {
class DeviceRunner;
}

extern "C" {
// runner.h's factory under names of its own, so this runner and the simulated card can be
// loaded into one process: nullptr for any platform but "cuda".
simpler::DeviceRunner* simpler_cuda_create_runner(const char* platform, const char* runtime,
                                                  int device, int op_timeout_ms);
void simpler_cuda_destroy_runner(simpler::DeviceRunner* runner);

// The fatbin (or cubin/PTX) file the runners load their kernels from; set before init().
void simpler_cuda_set_module_path(const char* path);
// How long the injected hang's spin kernel runs, in ms (it must outlive the op-timeout).
void simpler_cuda_set_spin_ms(long long ms);
void simpler_cuda_clear_faults();
// attempt 0 matches every attempt.
void simpler_cuda_add_fault(int kind, const char* selector, int attempt);
void simpler_cuda_set_test(const char* nodeid, int attempt);

// The driver's version (e.g. 13000), or -CUresult when it cannot be read.
int simpler_cuda_driver_version();
// The device's name, or "" when the driver cannot say.
const char* simpler_cuda_device_name(int device);
// Compute capability major*10+minor, or -CUresult.
int simpler_cuda_compute_capability(int device);
// Free bytes recorded at the first successful init on `device` in this process, or -1.
long long simpler_cuda_baseline_free(int device);
// Free and total bytes of `device` now, or -CUresult (the call borrows its primary context).
long long simpler_cuda_free_bytes(int device);
long long simpler_cuda_total_bytes(int device);
// cuDevicePrimaryCtxReset straight through, for measuring whether it returns while a
// kernel still runs; the runners never call this outside force_reset().
int simpler_cuda_raw_primary_ctx_reset(int device);
}

#endif  // SIMPLER_CUDACARD_H
