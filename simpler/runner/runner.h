// The device runner interface simpler drives through cppyy.
//
// A runner owns one device context on one card. Every call returns an rc
// (0 = success); on failure, last_where() names the platform call that
// surfaced the error and last_message() says what happened. Python turns a
// non-zero rc into simpler.DeviceRuntimeError: exceptions thrown from
// JIT-compiled C++ do not cross cppyy well, so none may leave a runner.
//
// A real-hardware implementation provides a DeviceRunner subclass and the three
// extern "C" functions at the bottom in a shared library of its own
// (SIMPLER_RUNNER_LIBRARY); docs/runner_library.md walks through one. Only
// plain C types cross the boundary, so a library built by any C++17 compiler
// for an LP64 target (x86-64, aarch64) works.
#ifndef SIMPLER_RUNNER_H
#define SIMPLER_RUNNER_H

#include <cstddef>

// Bumped whenever a struct, a virtual method or a factory signature below
// changes. The library reports the version it was built against through
// simpler_runner_abi(); simpler refuses a library whose version differs
// instead of calling through a mismatched vtable. Version 1 was the
// float32-only run(kernel, a, b, out, d0, d1, d2), which had no such function.
#define SIMPLER_RUNNER_ABI 2

// Element types. The values are part of the ABI and never change; new types
// get new values.
enum simpler_dtype {
    SIMPLER_F16 = 1,
    SIMPLER_BF16 = 2,
    SIMPLER_F32 = 3,
    SIMPLER_F64 = 4,
    SIMPLER_I8 = 5,
    SIMPLER_I16 = 6,
    SIMPLER_I32 = 7,
    SIMPLER_I64 = 8,
    SIMPLER_U8 = 9,
    SIMPLER_BOOL = 10,  // one byte per element, 0 or 1
};

// Which way a tensor's data flows in a launch (a bit mask: INOUT = IN | OUT).
enum simpler_direction {
    SIMPLER_IN = 1,     // the kernel reads it and must not write it
    SIMPLER_OUT = 2,    // the kernel writes every element; its prior contents are undefined
    SIMPLER_INOUT = 3,  // the kernel reads and writes it in place
};

// One tensor argument of a launch. The caller owns everything it points to
// for the duration of run() and nothing longer: a runner that needs the data
// after run() returns copies it. Data is host memory, row-major and
// contiguous (the last axis varies fastest).
struct simpler_tensor {
    void* data;                // first element; may be null when an extent is 0
    int dtype;                 // a simpler_dtype
    int ndim;                  // number of axes; 0 for a single element
    const long long* shape;    // ndim extents, each >= 0; not read when ndim is 0
    int direction;             // a simpler_direction
};

// One scalar argument of a launch, passed by value. Integer and bool dtypes
// carry the value in `i`, floating dtypes in `f`; the other field is 0.
struct simpler_scalar {
    int dtype;  // a simpler_dtype
    long long i;
    double f;
};

// simpler lays these structs out in memory itself, so their layout is fixed.
static_assert(sizeof(void*) == 8 && sizeof(long long) == 8, "runner.h needs an LP64 target");
static_assert(offsetof(simpler_tensor, dtype) == 8 && offsetof(simpler_tensor, ndim) == 12 &&
                  offsetof(simpler_tensor, shape) == 16 &&
                  offsetof(simpler_tensor, direction) == 24 && sizeof(simpler_tensor) == 32,
              "simpler_tensor layout");
static_assert(offsetof(simpler_scalar, i) == 8 && offsetof(simpler_scalar, f) == 16 &&
                  sizeof(simpler_scalar) == 24,
              "simpler_scalar layout");

// The rc a runner returns when a launch's arguments are wrong: an unknown
// kernel, a wrong count, direction, dtype or shape. It is CANN's
// ACL_ERROR_RT_PARAM_INVALID. Nothing reached the device, so the runner stays
// usable (unusable() stays 0) and simpler raises a ValueError, not a device
// error. last_where() is "run" and last_message() names the kernel and the
// argument at fault.
#define SIMPLER_RC_INVALID_ARGUMENT 107000

// What unusable() returns (see DeviceRunner::unusable). Version 2 libraries that
// return only 0 or 1 stay valid: 2 is a refinement, not a new contract.
#define SIMPLER_UNUSABLE 1
#define SIMPLER_UNUSABLE_PROCESS_MUST_END 2

namespace simpler {

class DeviceRunner {
public:
    virtual ~DeviceRunner() {}

    // Open the device context and allocate the runner's device memory.
    virtual int init() = 0;

    // Launch `kernel` and wait for it (bounded by the op-timeout).
    // tensors: n_tensors entries (the pointer may be null when n_tensors is 0);
    // scalars: n_scalars entries, likewise. Both arrays and everything they
    // point to belong to the caller. Tensors and scalars come in the order the
    // kernel's signature defines. A wrong signature or an unknown kernel must
    // return SIMPLER_RC_INVALID_ARGUMENT (see above), never crash or write
    // through a pointer it did not validate.
    virtual int run(const char* kernel, const simpler_tensor* tensors, int n_tensors,
                    const simpler_scalar* scalars, int n_scalars) = 0;

    // Bounded wait for all outstanding work on the card; reports a sticky error.
    virtual int drain(int timeout_ms) = 0;

    // Close and re-open the context (rtDeviceReset); does not clear a sticky error.
    virtual int soft_reset() = 0;

    // Force-reset the card (aclrtResetDeviceForce): clears this card's sticky
    // error and leaves the runner closed (init() again to use it).
    virtual int force_reset() = 0;

    // 1 when the card is clean and can take work, 0 otherwise.
    virtual int probe() = 0;

    // Close the runner; force-resets first when it is unusable. 0 only when a
    // probe then confirms the card clean.
    virtual int finalize() = 0;

    // 0 while usable; SIMPLER_UNUSABLE once a device error has made this runner
    // unusable; SIMPLER_UNUSABLE_PROCESS_MUST_END when the card holds work nothing
    // in this process can stop (a GPU kernel still running past the op-timeout):
    // simpler then tries no in-process reset, and the process holding the
    // context ends and is replaced. Such a runner's probe(), force_reset() and
    // finalize() must return at once without waiting on the card.
    virtual int unusable() const = 0;

    // Both stay valid until the runner's next call; "" after a success.
    virtual const char* last_where() const = 0;
    virtual const char* last_message() const = 0;
};

}  // namespace simpler

// The library's exports. simpler_runner_abi() returns SIMPLER_RUNNER_ABI as
// the library saw it when it was compiled.
extern "C" int simpler_runner_abi();
// A runner for `device` of `platform`, running `runtime` (the test's runtime
// marker, "default" when it has none; a library with one runtime may ignore
// it). op_timeout_ms bounds every launch. nullptr when the library does not
// implement the platform or the runtime; simpler then reports that to the
// user. The runner is not initialized yet: simpler calls init() next.
extern "C" simpler::DeviceRunner* simpler_create_runner(const char* platform, const char* runtime,
                                                        int device, int op_timeout_ms);
extern "C" void simpler_destroy_runner(simpler::DeviceRunner* runner);

// Optional (a library without it keeps ABI 2): the source files `kernel` of
// `platform` was built from, one path per line, each absolute or relative to
// the directory the run starts in (the project's root); nullptr or "" when the
// library does not say. The pointer stays valid for the library's lifetime.
// simpler's impact map ties each test to the kernels it launched and their
// sources, so a change to one kernel's source selects the tests that launched
// it (simpler affected); without this export a change to the library's C++
// selects every test.
extern "C" const char* simpler_kernel_sources(const char* platform, const char* kernel);

#endif  // SIMPLER_RUNNER_H
