// A TEST DOUBLE of the CUDA driver (libcuda.so.1), for CI machines without a GPU. Not NVIDIA
// code and containing none: written from the driver API's documented behaviour against the
// public <cuda.h>, it implements only the calls simpler/runner/cuda/cudacard.cpp makes.
// Defined under <cuda.h>, they take the header's versioned names (cuMemAlloc_v2), exactly
// as the real driver exports them, so the runner links against this file unchanged.
// It simulates what the runner's recovery depends on: refcounted primary contexts that a
// reset destroys; host memory as device memory (kernels run on the host at launch) with a
// card's accounting; sticky-erroring fault kernels; a spin that a reset waits for.
// Environment: FAKE_CUDA_DEVICES (default 2); FAKE_CUDA_RESET_HEALS="0" makes a fault's
// error outlive resets for the rest of the process (a card only a new process heals).
#include <cuda.h>
#include <sys/stat.h>


#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#define FAKE_API extern "C" __attribute__((visibility("default")))

// The GPU kernels themselves, built for the host (tests/host_kernels): the fake's work
// kernels launch them, so what runs here is what kernels.cu says. Their extern "C" names
// stay inside the library (built with -fvisibility=hidden): it exports only the driver API.
#include "cuda_on_host.h"
#include "kernels.cu"

namespace {

using Clock = std::chrono::steady_clock;
using Busy = Clock::time_point;  // a stream runs a spin kernel until then

constexpr size_t kTotalBytes = 1ULL << 30;
constexpr size_t kContextOverhead = 256ULL << 20;  // what a live context costs a card
constexpr size_t kPage = 2ULL << 20;               // allocations are carved in 2 MiB pages
constexpr int kMaxDevices = 64;

struct Context {
    std::map<CUdeviceptr, size_t> allocations;  // base -> bytes
    std::set<uintptr_t> modules;
    std::map<uintptr_t, Busy> streams;
    Busy null_stream{};  // stream 0
    CUresult sticky = CUDA_SUCCESS;
    int device = 0;
};

struct Device {
    int refcount = 0;
    uintptr_t generation = 0;  // of the newest context; its handle carries it
    std::unique_ptr<Context> ctx;
    CUresult poison = CUDA_SUCCESS;  // FAKE_CUDA_RESET_HEALS=0: later contexts are born with it
};

std::mutex g_mu;  // guards everything below; never held while waiting on a spin
bool g_initialized = false;
int g_device_count = 0;
Device g_devices[kMaxDevices];
uintptr_t g_next_handle = 1;  // modules and streams; never reused, so stale ones are unknown
thread_local CUcontext t_current = nullptr;

// A context handle is (generation << 8 | device + 1): a destroyed context's handle names an
// old generation and is refused without anything being dereferenced.
Context* find_context(CUcontext handle) {
    uintptr_t bits = reinterpret_cast<uintptr_t>(handle);
    int device = static_cast<int>(bits & 0xff) - 1;
    if (device < 0 || device >= g_device_count) return nullptr;
    Device& d = g_devices[device];
    return d.ctx && d.generation == bits >> 8 ? d.ctx.get() : nullptr;
}

// Why a call that writes through `out` (on `device`, unless it is -1) fails before it starts.
CUresult check_call(CUdevice device, const void* out) {
    if (!g_initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (device != -1 && (device < 0 || device >= g_device_count)) return CUDA_ERROR_INVALID_DEVICE;
    return out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
#define ON_DEVICE(device, out)               \
    std::unique_lock<std::mutex> lock(g_mu); \
    if (CUresult rc = check_call(device, out)) return rc

// Opens a call on the thread's current context `ctx`, or returns why it cannot start.
#define ON_CURRENT_CONTEXT                                                                     \
    std::lock_guard<std::mutex> lock(g_mu);                                                    \
    Context* current = g_initialized && t_current ? find_context(t_current) : nullptr;         \
    if (!current) return g_initialized ? CUDA_ERROR_INVALID_CONTEXT : CUDA_ERROR_NOT_INITIALIZED; \
    if (current->sticky) return current->sticky;                                               \
    Context& ctx = *current

size_t used_bytes(const Context& ctx) {
    size_t used = kContextOverhead;
    for (auto& [ptr, bytes] : ctx.allocations) used += (bytes + kPage - 1) / kPage * kPage;
    return used;
}

// True when [ptr, ptr + bytes) lies inside one live allocation of the context.
bool mapped(const Context& ctx, CUdeviceptr ptr, size_t bytes) {
    auto it = ctx.allocations.upper_bound(ptr);
    if (it == ctx.allocations.begin()) return false;
    --it;  // the allocation at or below ptr
    return bytes <= it->second && ptr - it->first <= it->second - bytes;
}

void destroy_context(Device& d) {
    if (!d.ctx) return;
    for (auto& [ptr, bytes] : d.ctx->allocations) std::free(reinterpret_cast<void*>(ptr));
    d.ctx.reset();
}

std::condition_variable g_spins_ended;  // fake_cuda_end_spins wakes the waits below
int g_waiting_for_idle = 0;              // threads in wait_idle, for fake_cuda_waiting_for_idle

// Waits, without the lock, until no kernel runs on the device's context: on a card a reset
// waits for the running kernel, and other threads' calls (cuStreamQuery) still answer.
void wait_idle(std::unique_lock<std::mutex>& lock, int device) {
    ++g_waiting_for_idle;
    while (Context* ctx = g_devices[device].ctx.get()) {
        Busy end = ctx->null_stream;
        for (auto& [id, busy] : ctx->streams) end = std::max(end, busy);
        if (Clock::now() >= end) break;
        g_spins_ended.wait_until(lock, end);  // the context may change meanwhile: look again
    }
    --g_waiting_for_idle;
}

Busy* find_stream(Context& ctx, CUstream handle) {
    if (handle == nullptr) return &ctx.null_stream;
    auto it = ctx.streams.find(reinterpret_cast<uintptr_t>(handle));
    return it == ctx.streams.end() ? nullptr : &it->second;
}

// --- the kernels of kernels.cu, on the host: each reads kernelParams as kernels.cu declares
// them and returns the fault it ends in (its context's new sticky error) or success. The
// work kernels check that what the launch's threads may touch is mapped, then launch
// kernels.cu's own kernel over the launch's grid. Threads beyond the launch's x-extent
// never run, as on a card: too small a grid leaves a tail.

// A launch's 1-D geometry (the kernels index by x only).
struct Grid {
    unsigned blocks, block;
    long long threads() const { return static_cast<long long>(blocks) * block; }
};

// The i-th kernel parameter as the kernel declares it (kernelParams[i] points at it).
template <typename T>
T arg(void** params, int i) {
    T value;
    std::memcpy(&value, params[i], sizeof(T));
    return value;
}

// The kernel's view of `count` elements at pointer parameter i; false when they are not
// all mapped, which on a card is an illegal address, not a crash of the host.
template <typename T>
bool view(const Context& ctx, void** p, int i, long long count, T*& out) {
    out = reinterpret_cast<T*>(arg<CUdeviceptr>(p, i));
    return count <= 0 || mapped(ctx, arg<CUdeviceptr>(p, i), size_t(count) * sizeof(T));
}

// vector_add(a, b, out, n).
template <typename T, void (*kKernel)(const T*, const T*, T*, long long)>
CUresult add(const Context& ctx, Busy&, void** p, Grid grid) {
    long long n = arg<long long>(p, 3), touched = std::min(n, grid.threads());
    T *a, *b, *out;
    bool ok = view(ctx, p, 0, touched, a) && view(ctx, p, 1, touched, b) &&
              view(ctx, p, 2, touched, out);
    if (!ok) return CUDA_ERROR_ILLEGAL_ADDRESS;
    host_launch(kKernel, grid.blocks, grid.block, a, b, out, n);
    return CUDA_SUCCESS;
}

// scale(a, alpha, out, n).
template <typename T, void (*kKernel)(const T*, T, T*, long long)>
CUresult scale(const Context& ctx, Busy&, void** p, Grid grid) {
    long long n = arg<long long>(p, 3), touched = std::min(n, grid.threads());
    T *a, *out;
    if (!view(ctx, p, 0, touched, a) || !view(ctx, p, 2, touched, out)) {
        return CUDA_ERROR_ILLEGAL_ADDRESS;
    }
    host_launch(kKernel, grid.blocks, grid.block, a, arg<T>(p, 1), out, n);
    return CUDA_SUCCESS;
}

CUresult matmul(const Context& ctx, Busy&, void** p, Grid grid) {
    long long m = arg<long long>(p, 3), k = arg<long long>(p, 4), n = arg<long long>(p, 5);
    long long count = std::min(m * n, grid.threads());
    float *a, *b, *out;
    if (!view(ctx, p, 0, count > 0 ? m * k : 0, a) || !view(ctx, p, 2, count, out) ||
        !view(ctx, p, 1, count > 0 ? k * n : 0, b)) return CUDA_ERROR_ILLEGAL_ADDRESS;
    host_launch(simpler_matmul_f32, grid.blocks, grid.block, a, b, out, m, k, n);
    return CUDA_SUCCESS;
}

CUresult softmax(const Context& ctx, Busy&, void** p, Grid grid) {
    long long rows = arg<long long>(p, 2), cols = arg<long long>(p, 3);
    long long touched = std::min(rows, grid.threads());
    float *x, *out;
    if (!view(ctx, p, 0, touched > 0 ? touched * std::max(cols, 1LL) : 0, x) ||
        !view(ctx, p, 1, touched * cols, out)) return CUDA_ERROR_ILLEGAL_ADDRESS;
    host_launch(simpler_softmax_f32, grid.blocks, grid.block, x, out, rows, cols);
    return CUDA_SUCCESS;
}

// Busy for `ns` of wall time from now (or from the end of a spin already running there).
CUresult spin(const Context&, Busy& busy, void** p, Grid) {
    busy = std::max(busy, Clock::now()) + std::chrono::nanoseconds(arg<unsigned long long>(p, 0));
    return CUDA_SUCCESS;
}

// The store faults only where nothing is mapped, as on a card.
CUresult illegal_address(const Context& ctx, Busy&, void** p, Grid) {
    int* target;
    if (!view(ctx, p, 0, 1, target)) return CUDA_ERROR_ILLEGAL_ADDRESS;
    *target = 1;
    return CUDA_SUCCESS;
}

// A 4-byte load from valid + 1 (256-byte aligned allocations make it misaligned).
CUresult misaligned(const Context&, Busy&, void** p, Grid) {
    return (arg<CUdeviceptr>(p, 0) + 1) % 4 ? CUDA_ERROR_MISALIGNED_ADDRESS : CUDA_SUCCESS;
}

CUresult noop(const Context&, Busy&, void**, Grid) { return CUDA_SUCCESS; }
CUresult trap(const Context&, Busy&, void**, Grid) { return CUDA_ERROR_LAUNCH_FAILED; }
CUresult device_assert(const Context&, Busy&, void** p, Grid) {  // assert(expected == 1)
    return arg<int>(p, 0) == 1 ? CUDA_SUCCESS : CUDA_ERROR_ASSERT;
}

using Kernel = CUresult (*)(const Context&, Busy&, void** params, Grid grid);
const struct { const char* name; int params; Kernel run; } kKernels[] = {
#define FAKE_ELEMENTWISE(suffix, T)                                  \
    {"simpler_vector_add_" #suffix, 4, add<T, simpler_vector_add_##suffix>}, \
    {"simpler_scale_" #suffix, 4, scale<T, simpler_scale_##suffix>}
    {"simpler_noop", 0, noop}, {"simpler_spin", 1, spin}, FAKE_ELEMENTWISE(f32, float),
    FAKE_ELEMENTWISE(f64, double), FAKE_ELEMENTWISE(i32, int), FAKE_ELEMENTWISE(i64, long long),
    {"simpler_matmul_f32", 6, matmul}, {"simpler_softmax_f32", 4, softmax},
    {"simpler_illegal_address", 1, illegal_address}, {"simpler_trap", 0, trap},
    {"simpler_device_assert", 1, device_assert}, {"simpler_misaligned", 2, misaligned},
};
constexpr int kKernelCount = sizeof(kKernels) / sizeof(kKernels[0]);

#define ERR(code, text) {code, #code, text}
const struct { CUresult code; const char *name, *text; } kErrors[] = {
    ERR(CUDA_SUCCESS, "no error"), ERR(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
    ERR(CUDA_ERROR_UNKNOWN, "unknown error"), ERR(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
    ERR(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"), ERR(CUDA_ERROR_NOT_READY, "device not ready"),
    ERR(CUDA_ERROR_MISALIGNED_ADDRESS, "misaligned address"),
    ERR(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    ERR(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
    ERR(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
    ERR(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
    ERR(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
    ERR(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
    ERR(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
    ERR(CUDA_ERROR_ASSERT, "device-side assert triggered"),
};
#undef ERR

// The name or the text of a code; CUDA_ERROR_INVALID_VALUE (and NULL) for an unknown one.
CUresult describe(CUresult code, const char** out, bool name) {
    if (!out) return CUDA_ERROR_INVALID_VALUE;
    *out = nullptr;
    for (const auto& e : kErrors) *out = e.code == code ? (name ? e.name : e.text) : *out;
    return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// A synchronous copy between host memory and `device`, which must lie in one allocation.
CUresult copy(void* to, const void* from, CUdeviceptr device, size_t bytes) {
    ON_CURRENT_CONTEXT;
    if (bytes == 0) return CUDA_SUCCESS;
    if (!to || !from || !mapped(ctx, device, bytes)) return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(to, from, bytes);
    return CUDA_SUCCESS;
}

}  // namespace

// --- the driver API: exactly the calls the CUDA runner makes. Those that need no context
// answer whatever a context's sticky error; the others (ON_CURRENT_CONTEXT) fail with it.

FAKE_API CUresult cuGetErrorName(CUresult error, const char** p) { return describe(error, p, 1); }
FAKE_API CUresult cuGetErrorString(CUresult error, const char** p) { return describe(error, p, 0); }

FAKE_API CUresult cuDriverGetVersion(int* version) {  // answers before cuInit, as the real one
    if (version) *version = 13000;
    return version ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_API CUresult cuInit(unsigned int flags) {
    if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_initialized) {  // the device count is fixed for the process, as on a host
        const char* env = std::getenv("FAKE_CUDA_DEVICES");
        g_device_count = std::clamp(env && *env ? std::atoi(env) : 2, 0, kMaxDevices);
        g_initialized = true;
    }
    return CUDA_SUCCESS;
}

FAKE_API CUresult cuDeviceGet(CUdevice* device, int ordinal) {
    ON_DEVICE(ordinal, device);
    *device = ordinal;
    return CUDA_SUCCESS;
}
FAKE_API CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
    ON_DEVICE(dev, name);
    if (len <= 0) return CUDA_ERROR_INVALID_VALUE;
    std::strncpy(name, "Fake CUDA Device", size_t(len))[len - 1] = '\0';  // cut to fit
    return CUDA_SUCCESS;
}
FAKE_API CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attrib, CUdevice dev) {
    ON_DEVICE(dev, value);
    if (attrib == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) *value = 9;  // 9.0: Hopper
    else if (attrib == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) *value = 0;
    else return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

FAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
    ON_DEVICE(dev, pctx);
    Device& d = g_devices[dev];
    if (!d.ctx) {  // a fresh context: clean, unless FAKE_CUDA_RESET_HEALS=0 poisoned the device
        d.ctx.reset(new Context{{}, {}, {}, {}, d.poison, dev});
        ++d.generation;
    }
    ++d.refcount;
    *pctx = reinterpret_cast<CUcontext>((d.generation << 8) | static_cast<uintptr_t>(dev + 1));
    return CUDA_SUCCESS;
}

FAKE_API CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {  // defines ..._v2
    ON_DEVICE(dev, &dev);
    Device& d = g_devices[dev];
    if (d.refcount == 0) return CUDA_ERROR_INVALID_CONTEXT;  // nothing retained
    if (--d.refcount > 0) return CUDA_SUCCESS;
    wait_idle(lock, dev);                     // destroying a context waits for its kernels
    if (d.refcount == 0) destroy_context(d);  // unless it was retained again meanwhile
    return CUDA_SUCCESS;
}

// "Resetting the primary context does not release it": the count stays, the context goes
// (after its running kernel ends, as on a card), and the next retain creates a fresh one.
FAKE_API CUresult cuDevicePrimaryCtxReset(CUdevice dev) {  // defines ..._v2
    ON_DEVICE(dev, &dev);
    wait_idle(lock, dev);
    destroy_context(g_devices[dev]);
    return CUDA_SUCCESS;
}

FAKE_API CUresult cuCtxGetCurrent(CUcontext* pctx) {
    ON_DEVICE(-1, pctx);
    *pctx = t_current;
    return CUDA_SUCCESS;
}
// Binding a context only names it: its sticky error surfaces at the calls that use it.
FAKE_API CUresult cuCtxSetCurrent(CUcontext ctx) {
    ON_DEVICE(-1, &ctx);
    if (ctx && !find_context(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    t_current = ctx;
    return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemGetInfo(size_t* free_bytes, size_t* total) {  // defines ..._v2
    ON_CURRENT_CONTEXT;
    if (!free_bytes || !total) return CUDA_ERROR_INVALID_VALUE;
    *free_bytes = kTotalBytes - std::min(used_bytes(ctx), kTotalBytes);
    *total = kTotalBytes;
    return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemAlloc(CUdeviceptr* dptr, size_t bytesize) {  // defines ..._v2
    ON_CURRENT_CONTEXT;
    if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    if (bytesize > kTotalBytes - used_bytes(ctx)) return CUDA_ERROR_OUT_OF_MEMORY;
    // 256-byte aligned like a card's allocations, so `valid + 1` is misaligned here too.
    void* host = std::aligned_alloc(256, (bytesize + 255) / 256 * 256);
    if (!host) return CUDA_ERROR_OUT_OF_MEMORY;
    *dptr = reinterpret_cast<CUdeviceptr>(host);
    ctx.allocations[*dptr] = bytesize;
    return CUDA_SUCCESS;
}
FAKE_API CUresult cuMemFree(CUdeviceptr dptr) {  // defines ..._v2
    ON_CURRENT_CONTEXT;
    if (!ctx.allocations.erase(dptr)) return CUDA_ERROR_INVALID_VALUE;  // freed, or unknown
    std::free(reinterpret_cast<void*>(dptr));
    return CUDA_SUCCESS;
}

FAKE_API CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t bytes) {  // ..._v2
    return copy(reinterpret_cast<void*>(dst), src, dst, bytes);
}
FAKE_API CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t bytes) {  // ..._v2
    return copy(dst, reinterpret_cast<const void*>(src), src, bytes);
}

// The file must exist; its contents are not read (the kernels are built in, above).
FAKE_API CUresult cuModuleLoad(CUmodule* module, const char* fname) {
    ON_CURRENT_CONTEXT;
    if (!module || !fname) return CUDA_ERROR_INVALID_VALUE;
    struct stat st {};
    if (stat(fname, &st) != 0 || !S_ISREG(st.st_mode)) return CUDA_ERROR_FILE_NOT_FOUND;
    ctx.modules.insert(g_next_handle);
    *module = reinterpret_cast<CUmodule>(g_next_handle++);
    return CUDA_SUCCESS;
}
FAKE_API CUresult cuModuleUnload(CUmodule module) {
    ON_CURRENT_CONTEXT;
    return ctx.modules.erase(uintptr_t(module)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
// A function handle is (module << 6 | kernel + 1): it dies with its module.
FAKE_API CUresult cuModuleGetFunction(CUfunction* fn, CUmodule module, const char* name) {
    ON_CURRENT_CONTEXT;
    if (!fn || !name) return CUDA_ERROR_INVALID_VALUE;
    uintptr_t id = reinterpret_cast<uintptr_t>(module);
    if (!ctx.modules.count(id)) return CUDA_ERROR_INVALID_HANDLE;
    for (uintptr_t k = 0; k < kKernelCount; ++k) {
        if (std::strcmp(kKernels[k].name, name) != 0) continue;
        *fn = reinterpret_cast<CUfunction>((id << 6) | (k + 1));
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_NOT_FOUND;
}

FAKE_API CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
    ON_CURRENT_CONTEXT;
    if (!stream || (flags & ~CU_STREAM_NON_BLOCKING) != 0) return CUDA_ERROR_INVALID_VALUE;
    ctx.streams[g_next_handle] = Busy{};
    *stream = reinterpret_cast<CUstream>(g_next_handle++);
    return CUDA_SUCCESS;
}
// As documented: returns at once even while the stream still runs a kernel.
FAKE_API CUresult cuStreamDestroy(CUstream stream) {  // defines ..._v2
    ON_CURRENT_CONTEXT;
    return ctx.streams.erase(uintptr_t(stream)) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
FAKE_API CUresult cuStreamQuery(CUstream stream) {
    ON_CURRENT_CONTEXT;
    Busy* busy = find_stream(ctx, stream);
    if (!busy) return CUDA_ERROR_INVALID_HANDLE;
    return Clock::now() < *busy ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

// Runs the kernel on the host now. A fault returns success here, as an asynchronous launch
// does, and leaves the context sticky-errored: the next call on it (the runner's
// cuStreamQuery) and every one after it return the fault. `extra` is not supported.
FAKE_API CUresult cuLaunchKernel(CUfunction f, unsigned int gridX, unsigned int gridY,
                                 unsigned int gridZ, unsigned int blockX, unsigned int blockY,
                                 unsigned int blockZ, unsigned int /*sharedMemBytes*/,
                                 CUstream hStream, void** kernelParams, void** extra) {
    ON_CURRENT_CONTEXT;
    uintptr_t bits = reinterpret_cast<uintptr_t>(f);
    int kernel = static_cast<int>(bits & 63) - 1;
    Busy* stream = find_stream(ctx, hStream);
    bool known = ctx.modules.count(bits >> 6) && kernel >= 0 && kernel < kKernelCount;
    if (!known || !stream) return CUDA_ERROR_INVALID_HANDLE;
    unsigned long long block = 1ULL * blockX * blockY * blockZ;
    bool no_params = kKernels[kernel].params > 0 && !kernelParams;
    if (!gridX || !gridY || !gridZ || !block || block > 1024 || extra || no_params) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    Grid grid{gridX, blockX};  // the kernels index by x only
    ctx.sticky = kKernels[kernel].run(ctx, *stream, kernelParams, grid);  // was success
    const char* heals = std::getenv("FAKE_CUDA_RESET_HEALS");
    if (ctx.sticky && heals && !std::strcmp(heals, "0")) g_devices[ctx.device].poison = ctx.sticky;
    return CUDA_SUCCESS;
}

// --- test hooks, not driver API: they let a test wait for a state of the fake, not a time.

// How many calls (a reset, a last release) are waiting for a running kernel to end.
FAKE_API int fake_cuda_waiting_for_idle() {
    std::lock_guard<std::mutex> lock(g_mu);
    return g_waiting_for_idle;
}

// Ends every running spin now, as if its time were up, and wakes the calls waiting for it.
FAKE_API void fake_cuda_end_spins() {
    std::lock_guard<std::mutex> lock(g_mu);
    for (Device& d : g_devices) {
        if (!d.ctx) continue;
        d.ctx->null_stream = Busy{};
        for (auto& [id, busy] : d.ctx->streams) busy = Busy{};
    }
    g_spins_ended.notify_all();
}
