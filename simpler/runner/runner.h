// The device runner interface simpler drives through cppyy.
//
// A runner owns one device context on one card. Every call returns an rc
// (0 = success); on failure, last_where() names the platform call that
// surfaced the error and last_message() says what happened. Python turns a
// non-zero rc into simpler.DeviceRuntimeError: exceptions thrown from
// JIT-compiled C++ do not cross cppyy well, so none are thrown here.
//
// A real-hardware implementation provides this header's class and the
// simpler_create_runner factory in a shared library of its own. Only plain C
// types cross the boundary, so a library built by any C++17 compiler works.
#ifndef SIMPLER_RUNNER_H
#define SIMPLER_RUNNER_H

namespace simpler {

class DeviceRunner {
public:
    virtual ~DeviceRunner() {}

    // Open the device context and allocate the runner's device memory.
    virtual int init() = 0;

    // Launch `kernel` and wait for it (bounded by the op-timeout).
    // a, b: row-major float32 inputs (may be null when the kernel takes
    // fewer); out: the caller-allocated output. Dimensions:
    //   vector_add: d0 = element count
    //   matmul:     a is d0 x d1, b is d1 x d2, out is d0 x d2
    //   softmax:    a and out are d0 rows of d1 (softmax per row)
    //   noop, spin: no arrays
    virtual int run(const char* kernel, const float* a, const float* b, float* out,
                    long long d0, long long d1, long long d2) = 0;

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

    // 1 once a device error has made this runner unusable.
    virtual int unusable() const = 0;

    virtual const char* last_where() const = 0;
    virtual const char* last_message() const = 0;
};

}  // namespace simpler

// Factory: nullptr for a platform the library does not implement.
extern "C" simpler::DeviceRunner* simpler_create_runner(const char* platform, int device,
                                                        int op_timeout_ms);
extern "C" void simpler_destroy_runner(simpler::DeviceRunner* runner);

#endif  // SIMPLER_RUNNER_H
