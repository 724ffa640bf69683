// The CUDA runner: runner.h over NVIDIA's driver API, on the device's primary context.
//
// What it does on a fault, it does because the card says so, never by belief:
//  - a kernel fault (illegal address, assert, trap, misaligned) surfaces at the bounded
//    synchronize; the runner reports the CUresult and where, and turns unusable;
//  - force_reset() resets the primary context and retains a fresh one; whether that
//    heals the card is for probe() to say: a known kernel against its golden, and free
//    memory back at the baseline this process saw after its first init;
//  - a kernel still running at the op-timeout cannot be stopped in process: the runner
//    reports it (unusable() == SIMPLER_UNUSABLE_PROCESS_MUST_END), leaves the context
//    alone from then on, and the process holding it must end.
// The primary context is one per device per process, so the state that outlives a
// runner (baseline, reset generation, a still-running kernel) is kept per device.
#include "runner.h"
#include "cudacard.h"
#include "cudaplan.h"
#include "launch_faults.h"

#include <cuda.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

// A card whose free memory is this far below its post-init baseline has lost memory the
// reset did not give back (one runner's module, stream and scratch take a few MiB).
constexpr long long kMemoryToleranceBytes = 64LL << 20;
constexpr int kProbeElements = 4096;
constexpr int kThreadsPerBlock = 256;
constexpr int kScratchBytes = 4096;

struct DeviceState {
    std::mutex mu;
    long long baseline_free = -1;
    std::atomic<unsigned> generation{0};  // bumped by every primary-context reset
    std::atomic<bool> stuck{false};       // a kernel still runs past the op-timeout
    std::string stuck_story;
};

simpler_shared::PerDevice<DeviceState> g_devices;

DeviceState& device_state(int ordinal) { return g_devices.get(ordinal); }

// The injected faults: each replaces the selected test's first launch with a fault kernel.
simpler_shared::LaunchFaults g_faults;

std::mutex g_control_mu;
std::string g_module_path;
long long g_spin_ms = 10000;

const char* const kFaultKernels[] = {"", "illegal_address", "trap", "device_assert",
                                     "misaligned", "spin"};

std::string result_name(CUresult rc) {
    const char* name = nullptr;
    if (cuGetErrorName(rc, &name) != CUDA_SUCCESS || name == nullptr) {
        return "CUresult " + std::to_string(static_cast<int>(rc));
    }
    return name;
}

std::string result_story(CUresult rc) {
    const char* text = nullptr;
    std::string story = result_name(rc);
    if (cuGetErrorString(rc, &text) == CUDA_SUCCESS && text != nullptr) story += ": " + std::string(text);
    return story;
}

// Device memory for one launch, freed when the launch is over -- unless a kernel still
// runs on it, when freeing would only block: then it is left to the process's end.
class LaunchBuffers {
public:
    ~LaunchBuffers() {
        if (keep_) return;
        for (CUdeviceptr p : pointers_) cuMemFree(p);
    }
    CUresult add(size_t bytes, CUdeviceptr* out) {
        *out = 0;
        if (bytes == 0) return CUDA_SUCCESS;
        CUresult rc = cuMemAlloc(out, bytes);
        if (rc == CUDA_SUCCESS) pointers_.push_back(*out);
        return rc;
    }
    void keep() { keep_ = true; }

private:
    std::vector<CUdeviceptr> pointers_;
    bool keep_ = false;
};

class CudaRunner final : public simpler::DeviceRunner {
public:
    CudaRunner(int device, int op_timeout_ms)
        : device_(device), op_timeout_ms_(op_timeout_ms), state_(device_state(device)) {}

    ~CudaRunner() override {
        std::lock_guard<std::mutex> lock(state_.mu);
        if (state_.stuck.load()) return;  // any call could wait on the running kernel
        if (open_) teardown_locked();
        if (retained_) cuDevicePrimaryCtxRelease(cu_device_);
    }

    int init() override {
        std::lock_guard<std::mutex> lock(state_.mu);
        return init_locked();
    }

    int run(const char* kernel, const simpler_tensor* tensors, int n_tensors,
            const simpler_scalar* scalars, int n_scalars) override {
        std::string name = kernel ? kernel : "";
        cudaplan::LaunchPlan plan;
        std::string refused =
            cudaplan::plan_launch(name, tensors, n_tensors, scalars, n_scalars, plan);
        // A refused call never reached the card: the runner stays usable.
        if (!refused.empty()) return fail(SIMPLER_RC_INVALID_ARGUMENT, "run", refused);
        std::lock_guard<std::mutex> lock(state_.mu);
        int rc = usable_locked("run");
        if (rc != 0) return rc;
        int fault = g_faults.take_first();
        if (fault != 0) {
            cudaplan::LaunchPlan injected;
            injected.symbol = std::string("simpler_") + kFaultKernels[fault];
            return launch_locked(injected, "injected " + std::string(kFaultKernels[fault]) +
                                               " in place of '" + name + "'");
        }
        return launch_locked(plan, "kernel '" + name + "'");
    }

    int drain(int timeout_ms) override {
        std::lock_guard<std::mutex> lock(state_.mu);
        int rc = usable_locked("cuStreamQuery");
        if (rc != 0) return rc;
        return wait_locked("drain", timeout_ms < 0 ? 0 : timeout_ms, false);
    }

    int soft_reset() override {
        std::lock_guard<std::mutex> lock(state_.mu);
        if (state_.stuck.load()) return refuse_stuck("soft_reset");
        if (open_) teardown_locked();
        return init_locked();
    }

    int force_reset() override {
        std::lock_guard<std::mutex> lock(state_.mu);
        return force_reset_locked();
    }

    int probe() override {
        std::lock_guard<std::mutex> lock(state_.mu);
        return probe_locked();
    }

    int finalize() override {
        std::lock_guard<std::mutex> lock(state_.mu);
        if (state_.stuck.load()) return refuse_stuck("finalize");
        if (unusable_) {
            int rc = force_reset_locked();
            if (rc != 0) return rc;
        }
        if (!open_ || stale_locked()) {
            int rc = init_locked();
            if (rc != 0) return rc;
        }
        bool clean = probe_locked() == 1;
        std::string why = last_.message();
        teardown_locked();
        if (retained_) cuDevicePrimaryCtxRelease(cu_device_);
        retained_ = false;
        if (!clean) return fail(CUDA_ERROR_UNKNOWN, "finalize", why);
        return ok();
    }

    int unusable() const override {
        if (state_.stuck.load()) return SIMPLER_UNUSABLE_PROCESS_MUST_END;
        return unusable_ ? SIMPLER_UNUSABLE : 0;
    }
    const char* last_where() const override { return last_.where().c_str(); }
    const char* last_message() const override { return last_.message().c_str(); }

private:
    int init_locked() {
        if (state_.stuck.load()) return refuse_stuck("init");
        if (open_ && !stale_locked()) teardown_locked();
        open_ = false;
        CUresult rc = cuInit(0);
        if (rc != CUDA_SUCCESS) return driver_fail(rc, "cuInit", "init");
        if ((rc = cuDeviceGet(&cu_device_, device_)) != CUDA_SUCCESS) {
            return driver_fail(rc, "cuDeviceGet", "device " + std::to_string(device_));
        }
        CUcontext ctx = nullptr;
        if ((rc = cuDevicePrimaryCtxRetain(&ctx, cu_device_)) != CUDA_SUCCESS) {
            return driver_fail(rc, "cuDevicePrimaryCtxRetain", "init");
        }
        // One retain per runner: a re-init takes the (possibly fresh) handle and keeps one.
        if (retained_) cuDevicePrimaryCtxRelease(cu_device_);
        ctx_ = ctx;
        retained_ = true;
        if ((rc = cuCtxSetCurrent(ctx_)) != CUDA_SUCCESS) return device_fail(rc, "cuCtxSetCurrent", "init");
        std::string path;
        {
            std::lock_guard<std::mutex> control(g_control_mu);
            path = g_module_path;
        }
        if (path.empty()) return fail(CUDA_ERROR_FILE_NOT_FOUND, "cuModuleLoad", "no kernel module set");
        if ((rc = cuModuleLoad(&module_, path.c_str())) != CUDA_SUCCESS) {
            return device_fail(rc, "cuModuleLoad", path);
        }
        if ((rc = cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING)) != CUDA_SUCCESS) {
            cuModuleUnload(module_);
            return device_fail(rc, "cuStreamCreate", "init");
        }
        if ((rc = cuMemAlloc(&scratch_, kScratchBytes)) != CUDA_SUCCESS) {
            cuStreamDestroy(stream_);
            cuModuleUnload(module_);
            return device_fail(rc, "cuMemAlloc", "init");
        }
        generation_ = state_.generation.load();
        open_ = true;
        unusable_ = false;
        if (state_.baseline_free < 0) {
            size_t free_bytes = 0, total = 0;
            if (cuMemGetInfo(&free_bytes, &total) == CUDA_SUCCESS) {
                state_.baseline_free = static_cast<long long>(free_bytes);
            }
        }
        return ok();
    }

    // A reset (this runner's or another's on the same device) destroyed the handles.
    bool stale_locked() const { return generation_ != state_.generation.load(); }

    int usable_locked(const char* where) {
        if (state_.stuck.load()) return refuse_stuck(where);
        if (unusable_) {
            return fail(cause_rc_, where, "runner is unusable after " + cause_ +
                                              "; finalize it and build a new one");
        }
        if (!open_) return fail(CUDA_ERROR_NOT_INITIALIZED, where, "runner is not initialized: call init()");
        if (stale_locked()) {
            // Another runner's recovery reset the shared primary context under this one: its
            // module, stream and scratch died with it, through no fault of this runner's.
            open_ = false;
            int rc = init_locked();
            if (rc != 0) return rc;
        }
        CUresult rc = cuCtxSetCurrent(ctx_);
        return rc == CUDA_SUCCESS ? 0 : device_fail(rc, "cuCtxSetCurrent", where);
    }

    int launch_locked(const cudaplan::LaunchPlan& plan, const std::string& what) {
        CUfunction function = nullptr;
        CUresult rc = cuModuleGetFunction(&function, module_, plan.symbol.c_str());
        if (rc != CUDA_SUCCESS) return device_fail(rc, "cuModuleGetFunction", plan.symbol);
        LaunchBuffers buffers;
        std::vector<CUdeviceptr> pointers(plan.tensors.size());
        for (size_t i = 0; i < plan.tensors.size(); ++i) {
            const simpler_tensor& t = *plan.tensors[i];
            size_t bytes = static_cast<size_t>(cudaplan::element_count(t)) * cudaplan::dtype_size(t.dtype);
            if ((rc = buffers.add(bytes, &pointers[i])) != CUDA_SUCCESS) return device_fail(rc, "cuMemAlloc", what);
            if ((t.direction & SIMPLER_IN) && bytes > 0 &&
                (rc = cuMemcpyHtoD(pointers[i], t.data, bytes)) != CUDA_SUCCESS) {
                return device_fail(rc, "cuMemcpyHtoD", what);
            }
        }
        // The parameters in kernels.cu's order: the inputs, the scalar, the output, the sizes.
        std::vector<void*> params;
        for (size_t i = 0; i + 1 < pointers.size(); ++i) params.push_back(&pointers[i]);
        float f32 = static_cast<float>(plan.f_scalar);
        double f64 = plan.f_scalar;
        int i32 = static_cast<int>(plan.i_scalar);
        long long i64 = plan.i_scalar;
        if (plan.scalar_dtype == SIMPLER_F32) params.push_back(&f32);
        if (plan.scalar_dtype == SIMPLER_F64) params.push_back(&f64);
        if (plan.scalar_dtype == SIMPLER_I32) params.push_back(&i32);
        if (plan.scalar_dtype == SIMPLER_I64) params.push_back(&i64);
        if (!pointers.empty()) params.push_back(&pointers.back());
        std::vector<long long> sizes = plan.sizes;
        for (long long& n : sizes) params.push_back(&n);
        unsigned long long spin_ns = 0;
        CUdeviceptr unmapped = 0x100;  // below every allocation the driver hands out
        int assert_expected = 0;
        CUdeviceptr misaligned_base = scratch_, sink = scratch_ + 64;
        if (plan.symbol == "simpler_spin") {
            std::lock_guard<std::mutex> control(g_control_mu);
            spin_ns = static_cast<unsigned long long>(g_spin_ms) * 1000000ULL;
            params = {&spin_ns};
        } else if (plan.symbol == "simpler_illegal_address") {
            params = {&unmapped};
        } else if (plan.symbol == "simpler_device_assert") {
            params = {&assert_expected};
        } else if (plan.symbol == "simpler_misaligned") {
            params = {&misaligned_base, &sink};
        }
        long long threads = plan.threads < 1 ? 1 : plan.threads;
        unsigned blocks = static_cast<unsigned>((threads + kThreadsPerBlock - 1) / kThreadsPerBlock);
        unsigned block = threads < kThreadsPerBlock ? static_cast<unsigned>(threads) : kThreadsPerBlock;
        if (plan.threads == 0 && !plan.tensors.empty()) return ok();  // nothing to compute
        rc = cuLaunchKernel(function, blocks, 1, 1, block, 1, 1, 0, stream_, params.data(), nullptr);
        if (rc != CUDA_SUCCESS) return device_fail(rc, "cuLaunchKernel", what);
        rc = static_cast<CUresult>(wait_locked(what, op_timeout_ms_, true));
        if (rc != CUDA_SUCCESS) {
            if (state_.stuck.load()) buffers.keep();
            return rc;
        }
        for (size_t i = 0; i < plan.tensors.size(); ++i) {
            const simpler_tensor& t = *plan.tensors[i];
            size_t bytes = static_cast<size_t>(cudaplan::element_count(t)) * cudaplan::dtype_size(t.dtype);
            if ((t.direction & SIMPLER_OUT) && bytes > 0 &&
                (rc = cuMemcpyDtoH(t.data, pointers[i], bytes)) != CUDA_SUCCESS) {
                return device_fail(rc, "cuMemcpyDtoH", what);
            }
        }
        return ok();
    }

    // The bounded synchronize: poll the stream until the deadline, never block in the driver.
    int wait_locked(const std::string& what, int timeout_ms, bool launched) {
        auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
        for (;;) {
            CUresult rc = cuStreamQuery(stream_);
            if (rc == CUDA_SUCCESS) return ok();
            if (rc != CUDA_ERROR_NOT_READY) return device_fail(rc, "cuStreamQuery", what);
            if (std::chrono::steady_clock::now() >= deadline) break;
            std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
        std::string story = result_name(CUDA_ERROR_NOT_READY) + ": " + what + " still running after " +
                            std::to_string(timeout_ms) + " ms" +
                            (launched ? " (the op-timeout)" : " (drain)") +
                            "; a running kernel cannot be stopped in process: the process "
                            "holding device " + std::to_string(device_) + "'s context must end";
        state_.stuck_story = story;
        state_.stuck.store(true);
        return fail(CUDA_ERROR_NOT_READY, "cuStreamQuery", story);
    }

    int force_reset_locked() {
        if (state_.stuck.load()) return refuse_stuck("cuDevicePrimaryCtxReset");
        // The module, stream and scratch die with the context: no call on a dead context.
        open_ = false;
        CUresult rc = cuInit(0);
        if (rc == CUDA_SUCCESS) rc = cuDeviceGet(&cu_device_, device_);
        if (rc != CUDA_SUCCESS) return driver_fail(rc, "cuDeviceGet", "force reset");
        rc = cuDevicePrimaryCtxReset(cu_device_);
        state_.generation.fetch_add(1);
        if (rc != CUDA_SUCCESS) return fail(rc, "cuDevicePrimaryCtxReset", result_story(rc));
        // The fresh retain: a reset does not release, so this runner's old retain is given
        // back and the fresh context's taken in its place.
        CUcontext fresh = nullptr;
        rc = cuDevicePrimaryCtxRetain(&fresh, cu_device_);
        if (rc != CUDA_SUCCESS) return fail(rc, "cuDevicePrimaryCtxRetain", result_story(rc));
        if (retained_) cuDevicePrimaryCtxRelease(cu_device_);
        ctx_ = fresh;
        retained_ = true;
        unusable_ = false;
        return ok();
    }

    int probe_locked() {
        if (state_.stuck.load()) {
            fail(CUDA_ERROR_NOT_READY, "probe", state_.stuck_story);
            return 0;
        }
        if (usable_locked("probe") != 0) return 0;
        std::vector<float> a(kProbeElements), b(kProbeElements), out(kProbeElements, -1.0f);
        for (int i = 0; i < kProbeElements; ++i) {
            a[i] = 0.5f * static_cast<float>(i);
            b[i] = 1.0f - static_cast<float>(i);
        }
        long long shape[1] = {kProbeElements};
        simpler_tensor t[3] = {{a.data(), SIMPLER_F32, 1, shape, SIMPLER_IN},
                               {b.data(), SIMPLER_F32, 1, shape, SIMPLER_IN},
                               {out.data(), SIMPLER_F32, 1, shape, SIMPLER_OUT}};
        cudaplan::LaunchPlan plan;
        cudaplan::plan_launch("vector_add", t, 3, nullptr, 0, plan);
        if (launch_locked(plan, "probe vector_add") != 0) return 0;
        for (int i = 0; i < kProbeElements; ++i) {
            if (out[i] != a[i] + b[i]) {
                fail(CUDA_ERROR_UNKNOWN, "probe", "probe vector_add differs from its golden at element " +
                                                      std::to_string(i));
                return 0;
            }
        }
        size_t free_bytes = 0, total = 0;
        CUresult rc = cuMemGetInfo(&free_bytes, &total);
        if (rc != CUDA_SUCCESS) {
            device_fail(rc, "cuMemGetInfo", "probe");
            return 0;
        }
        long long missing = state_.baseline_free - static_cast<long long>(free_bytes);
        if (state_.baseline_free >= 0 && missing > kMemoryToleranceBytes) {
            fail(CUDA_ERROR_OUT_OF_MEMORY, "probe",
                 "free memory is " + std::to_string(missing >> 20) +
                     " MiB below this process's post-init baseline: the reset did not give it back");
            return 0;
        }
        ok();
        return 1;
    }

    void teardown_locked() {
        if (open_ && !stale_locked() && !state_.stuck.load()) {
            cuCtxSetCurrent(ctx_);
            cuMemFree(scratch_);
            cuStreamDestroy(stream_);
            cuModuleUnload(module_);
        }
        open_ = false;
        module_ = nullptr;
        stream_ = nullptr;
        scratch_ = 0;
    }

    int refuse_stuck(const char* where) {
        return fail(CUDA_ERROR_NOT_READY, where, "refused, nothing was called: " + state_.stuck_story);
    }

    // A call that failed before any context existed: the driver or the device is missing.
    int driver_fail(CUresult rc, const char* where, const std::string& what) {
        return fail(rc, where, result_story(rc) + " (" + what + ")");
    }

    // A device call failed: the runner is unusable until a reset; the probe says if it healed.
    int device_fail(CUresult rc, const char* where, const std::string& what) {
        unusable_ = true;
        cause_rc_ = rc;
        cause_ = result_name(rc) + " at " + where;
        return fail(rc, where, result_story(rc) + " (" + what + ")");
    }

    int fail(int rc, const char* where, const std::string& message) {
        return last_.fail(rc, where, message);
    }
    int ok() { return last_.ok(); }

    const int device_;
    const int op_timeout_ms_;
    DeviceState& state_;
    CUdevice cu_device_ = 0;
    CUcontext ctx_ = nullptr;
    CUmodule module_ = nullptr;
    CUstream stream_ = nullptr;
    CUdeviceptr scratch_ = 0;
    unsigned generation_ = 0;
    bool retained_ = false;
    bool open_ = false;
    bool unusable_ = false;
    int cause_rc_ = 0;
    std::string cause_;
    simpler_shared::LastCall last_;
};


}  // namespace

// Every runtime runs the same way on a GPU: the runtime name is the test's, not the card's.
extern "C" simpler::DeviceRunner* simpler_cuda_create_runner(const char* platform, const char*,
                                                             int device, int op_timeout_ms) {
    if (platform == nullptr || std::strcmp(platform, "cuda") != 0) return nullptr;
    if (device < 0 || op_timeout_ms <= 0) return nullptr;
    return new CudaRunner(device, op_timeout_ms);
}

extern "C" void simpler_cuda_destroy_runner(simpler::DeviceRunner* runner) { delete runner; }

extern "C" void simpler_cuda_set_module_path(const char* path) {
    std::lock_guard<std::mutex> lock(g_control_mu);
    g_module_path = path ? path : "";
}

extern "C" void simpler_cuda_set_spin_ms(long long ms) {
    std::lock_guard<std::mutex> lock(g_control_mu);
    g_spin_ms = ms > 0 ? ms : 1;
}

extern "C" void simpler_cuda_clear_faults() { g_faults.clear(); }

extern "C" void simpler_cuda_add_fault(int kind, const char* selector, int attempt) {
    if (kind < SIMPLER_CUDA_ILLEGAL_ADDRESS || kind > SIMPLER_CUDA_HANG) return;
    g_faults.add(kind, selector, attempt);
}

extern "C" void simpler_cuda_set_test(const char* nodeid, int attempt) {
    g_faults.set_test(nodeid, attempt);
}

extern "C" int simpler_cuda_driver_version() {
    int version = 0;
    CUresult rc = cuDriverGetVersion(&version);
    return rc == CUDA_SUCCESS ? version : -static_cast<int>(rc);
}

extern "C" const char* simpler_cuda_device_name(int device) {
    static thread_local char name[256];
    CUdevice dev = 0;
    name[0] = '\0';
    CUresult rc = cuInit(0);
    if (rc == CUDA_SUCCESS) rc = cuDeviceGet(&dev, device);
    if (rc == CUDA_SUCCESS && cuDeviceGetName(name, sizeof(name), dev) != CUDA_SUCCESS) name[0] = '\0';
    return name;
}

extern "C" int simpler_cuda_compute_capability(int device) {
    CUdevice dev = 0;
    int major = 0, minor = 0;
    CUresult rc = cuInit(0);
    if (rc == CUDA_SUCCESS) rc = cuDeviceGet(&dev, device);
    if (rc == CUDA_SUCCESS) rc = cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    if (rc == CUDA_SUCCESS) rc = cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    return rc == CUDA_SUCCESS ? major * 10 + minor : -static_cast<int>(rc);
}

extern "C" long long simpler_cuda_baseline_free(int device) {
    return device_state(device).baseline_free;
}

namespace {
// Borrows the primary context for one query and gives the thread back its own.
long long memory_query(int device, bool want_free) {
    CUdevice dev = 0;
    CUresult rc = cuInit(0);
    if (rc == CUDA_SUCCESS) rc = cuDeviceGet(&dev, device);
    if (rc != CUDA_SUCCESS) return -static_cast<long long>(rc);
    CUcontext previous = nullptr, ctx = nullptr;
    cuCtxGetCurrent(&previous);
    if ((rc = cuDevicePrimaryCtxRetain(&ctx, dev)) != CUDA_SUCCESS) return -static_cast<long long>(rc);
    size_t free_bytes = 0, total_bytes = 0;
    rc = cuCtxSetCurrent(ctx);
    if (rc == CUDA_SUCCESS) rc = cuMemGetInfo(&free_bytes, &total_bytes);
    // A reset may have destroyed the thread's own context: then it is left with none.
    if (cuCtxSetCurrent(previous) != CUDA_SUCCESS) cuCtxSetCurrent(nullptr);
    cuDevicePrimaryCtxRelease(dev);
    if (rc != CUDA_SUCCESS) return -static_cast<long long>(rc);
    return static_cast<long long>(want_free ? free_bytes : total_bytes);
}
}  // namespace

extern "C" long long simpler_cuda_free_bytes(int device) { return memory_query(device, true); }

extern "C" long long simpler_cuda_total_bytes(int device) { return memory_query(device, false); }

extern "C" int simpler_cuda_raw_primary_ctx_reset(int device) {
    CUdevice dev = 0;
    CUresult rc = cuInit(0);
    if (rc == CUDA_SUCCESS) rc = cuDeviceGet(&dev, device);
    if (rc != CUDA_SUCCESS) return static_cast<int>(rc);
    rc = cuDevicePrimaryCtxReset(dev);
    device_state(device).generation.fetch_add(1);
    return static_cast<int>(rc);
}
