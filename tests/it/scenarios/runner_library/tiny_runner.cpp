// A runner library of its own, built apart from simpler against runner.h alone:
// platform "tinyhw", runtime "tinyrt". Its "fault" kernel leaves the card
// sticky-errored until a force reset, as a real card's op-timeout does.
#include "runner.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace {

constexpr int kFaultRc = 7101;
constexpr const char* kFaultWhere = "tinyLaunch";

std::mutex g_mu;
std::map<int, bool> g_sticky;  // per device, for the whole process

bool sticky(int device) {
    std::lock_guard<std::mutex> lock(g_mu);
    return g_sticky[device];
}

void set_sticky(int device, bool value) {
    std::lock_guard<std::mutex> lock(g_mu);
    g_sticky[device] = value;
}

class TinyRunner final : public simpler::DeviceRunner {
public:
    explicit TinyRunner(int device) : device_(device) {}

    int init() override {
        if (sticky(device_)) return fail(kFaultRc, "tinyOpen", "card is sticky-errored");
        open_ = true;
        unusable_ = false;
        return ok();
    }

    int run(const char* kernel, const simpler_tensor* t, int nt, const simpler_scalar* s,
            int ns) override {
        if (unusable_ || !open_) return fail(-1, "run", "runner is unusable or not open");
        const std::string name = kernel ? kernel : "";
        if (name == "iota") return iota(t, nt, s, ns);
        if (name == "axpy") return axpy(t, nt, s, ns);
        if (name == "fault" && nt == 0 && ns == 0) {
            set_sticky(device_, true);
            unusable_ = true;
            return fail(kFaultRc, kFaultWhere, "injected fault: the card is sticky-errored");
        }
        return refuse("unknown kernel or wrong signature for '" + name + "'");
    }

    int drain(int) override { return sticky(device_) ? fail(kFaultRc, "tinySync", "sticky") : ok(); }
    int soft_reset() override { return init(); }

    int force_reset() override {
        set_sticky(device_, false);
        open_ = false;
        unusable_ = false;
        return ok();
    }

    int probe() override { return sticky(device_) ? 0 : 1; }

    int finalize() override {
        if (unusable_) force_reset();
        open_ = false;
        return sticky(device_) ? fail(kFaultRc, "finalize", "still sticky") : ok();
    }

    int unusable() const override { return unusable_ ? 1 : 0; }
    const char* last_where() const override { return where_.c_str(); }
    const char* last_message() const override { return message_.c_str(); }

private:
    static long long count(const simpler_tensor& t) {
        long long n = 1;
        for (int d = 0; d < t.ndim; ++d) n *= t.shape[d];
        return n;
    }

    // iota(out: int32 OUT, start: int scalar): out[i] = start + i.
    int iota(const simpler_tensor* t, int nt, const simpler_scalar* s, int ns) {
        if (nt != 1 || ns != 1 || t[0].direction != SIMPLER_OUT || t[0].dtype != SIMPLER_I32 ||
            s[0].dtype != SIMPLER_I64) {
            return refuse("iota takes one int32 OUT tensor and one int64 scalar");
        }
        auto* out = static_cast<std::int32_t*>(t[0].data);
        for (long long i = 0; i < count(t[0]); ++i) out[i] = static_cast<std::int32_t>(s[0].i + i);
        return ok();
    }

    // axpy(x: float64 IN, y: float64 INOUT, alpha: float64 scalar): y += alpha * x.
    int axpy(const simpler_tensor* t, int nt, const simpler_scalar* s, int ns) {
        if (nt != 2 || ns != 1 || t[0].direction != SIMPLER_IN || t[1].direction != SIMPLER_INOUT ||
            t[0].dtype != SIMPLER_F64 || t[1].dtype != SIMPLER_F64 || s[0].dtype != SIMPLER_F64 ||
            count(t[0]) != count(t[1])) {
            return refuse("axpy takes float64 x (IN), y (INOUT) of one size and a float64 alpha");
        }
        const double* x = static_cast<const double*>(t[0].data);
        double* y = static_cast<double*>(t[1].data);
        for (long long i = 0; i < count(t[0]); ++i) y[i] += s[0].f * x[i];
        return ok();
    }

    int refuse(const std::string& why) { return fail(SIMPLER_RC_INVALID_ARGUMENT, "run", why); }

    int fail(int rc, const char* where, const std::string& message) {
        where_ = where;
        message_ = message;
        return rc;
    }

    int ok() {
        where_.clear();
        message_.clear();
        return 0;
    }

    const int device_;
    bool open_ = false;
    bool unusable_ = false;
    std::string where_;
    std::string message_;
};

}  // namespace

extern "C" int simpler_runner_abi() { return SIMPLER_RUNNER_ABI; }

extern "C" simpler::DeviceRunner* simpler_create_runner(const char* platform, const char* runtime,
                                                        int device, int) {
    if (!platform || std::strcmp(platform, "tinyhw") != 0) return nullptr;
    if (!runtime || std::strcmp(runtime, "tinyrt") != 0) return nullptr;
    return new TinyRunner(device);
}

extern "C" void simpler_destroy_runner(simpler::DeviceRunner* runner) { delete runner; }
