// A card of a project's own whose kernels live in files of their own (kernels/),
// and which says so through simpler_kernel_sources: a change to one kernel's file
// selects only the tests that launched that kernel. Platform "kcard"; no faults.
#include "runner.h"

#include "kernels/fill.h"
#include "kernels/twice.h"

#include <cstring>
#include <string>

namespace {

long long count(const simpler_tensor& t) {
    long long n = 1;
    for (int d = 0; d < t.ndim; ++d) n *= t.shape[d];
    return n;
}

bool is_f64(const simpler_tensor& t, int direction) {
    return t.dtype == SIMPLER_F64 && t.direction == direction;
}

class KernelCard final : public simpler::DeviceRunner {
public:
    int init() override { return 0; }

    int run(const char* kernel, const simpler_tensor* t, int nt, const simpler_scalar* s,
            int ns) override {
        const std::string name = kernel ? kernel : "";
        if (name == "fill" && nt == 1 && ns == 1 && is_f64(t[0], SIMPLER_OUT)) {
            fill(static_cast<double*>(t[0].data), count(t[0]), s[0].f);
            return 0;
        }
        if (name == "twice" && nt == 2 && ns == 0 && is_f64(t[0], SIMPLER_IN) &&
            is_f64(t[1], SIMPLER_OUT) && count(t[0]) == count(t[1])) {
            twice(static_cast<const double*>(t[0].data), static_cast<double*>(t[1].data),
                  count(t[0]));
            return 0;
        }
        message_ = "unknown kernel or wrong signature for '" + name + "'";
        return SIMPLER_RC_INVALID_ARGUMENT;
    }

    int drain(int) override { return 0; }
    int soft_reset() override { return 0; }
    int force_reset() override { return 0; }
    int probe() override { return 1; }
    int finalize() override { return 0; }
    int unusable() const override { return 0; }
    const char* last_where() const override { return message_.empty() ? "" : "run"; }
    const char* last_message() const override { return message_.c_str(); }

private:
    std::string message_;
};

}  // namespace

extern "C" int simpler_runner_abi() { return SIMPLER_RUNNER_ABI; }

extern "C" simpler::DeviceRunner* simpler_create_runner(const char* platform, const char*, int,
                                                        int) {
    return platform && std::strcmp(platform, "kcard") == 0 ? new KernelCard() : nullptr;
}

extern "C" void simpler_destroy_runner(simpler::DeviceRunner* runner) { delete runner; }

// Relative to the directory the run starts in: the project's root, where card/ lives.
extern "C" const char* simpler_kernel_sources(const char*, const char* kernel) {
    if (kernel && std::strcmp(kernel, "fill") == 0) return "card/kernels/fill.h";
    if (kernel && std::strcmp(kernel, "twice") == 0) return "card/kernels/twice.h";
    return nullptr;
}
