// What every simulated kernel shares: a launch's plan and its argument checks.
//
// Python checks a known kernel's arguments before they reach C++; these checks
// are the card's own, so a caller that bypasses Python (or a future binding)
// gets SIMPLER_RC_INVALID_ARGUMENT and a message instead of a wild write.
#ifndef SIMPLER_SIMKERNELS_PLAN_H
#define SIMPLER_SIMKERNELS_PLAN_H

#include "../runner.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace simkernels {

// The work of one launch: `rows` units split across the AICores, each range
// handed to `body`. A plan without a body spins until the op-timeout reaps it.
struct Plan {
    long long rows = 0;
    std::function<void(long long begin, long long end, const std::atomic<bool>& cancelled)> body;
    bool spins = false;
};

class Args {
public:
    Args(const std::string& kernel, const simpler_tensor* tensors, int n_tensors,
         const simpler_scalar* scalars, int n_scalars)
        : kernel_(kernel), t_(tensors), nt_(n_tensors), s_(scalars), ns_(n_scalars) {}

    // The first problem found, "" when the arguments fit `directions`.
    std::string check_counts(std::vector<int> directions, int n_scalars) const {
        if (nt_ != static_cast<int>(directions.size()) || ns_ != n_scalars) {
            return "kernel '" + kernel_ + "' takes " + std::to_string(directions.size()) +
                   " tensor(s) and " + std::to_string(n_scalars) + " scalar(s), got " +
                   std::to_string(nt_) + " and " + std::to_string(ns_);
        }
        if (nt_ > 0 && t_ == nullptr) return "kernel '" + kernel_ + "': tensors is null";
        if (ns_ > 0 && s_ == nullptr) return "kernel '" + kernel_ + "': scalars is null";
        for (int i = 0; i < nt_; ++i) {
            if (t_[i].direction != directions[i]) {
                return where(i) + "has direction " + std::to_string(t_[i].direction) +
                       ", expected " + std::to_string(directions[i]);
            }
            if (t_[i].ndim < 0 || t_[i].ndim > 32 || (t_[i].ndim > 0 && t_[i].shape == nullptr)) {
                return where(i) + "has a malformed shape";
            }
            for (int d = 0; d < t_[i].ndim; ++d) {
                if (t_[i].shape[d] < 0) return where(i) + "has a negative extent";
            }
            if (t_[i].data == nullptr && elements(i) > 0) return where(i) + "has no data";
        }
        return "";
    }

    std::string check_dtype(int i, std::initializer_list<int> allowed) const {
        if (std::find(allowed.begin(), allowed.end(), t_[i].dtype) != allowed.end()) return "";
        return where(i) + "has unsupported dtype " + std::to_string(t_[i].dtype);
    }

    std::string check_same(int i, int j) const {
        if (t_[i].dtype != t_[j].dtype) return where(j) + "dtype differs from tensor " + std::to_string(i);
        if (extents(i) != extents(j)) return where(j) + "shape differs from tensor " + std::to_string(i);
        return "";
    }

    std::vector<long long> extents(int i) const {
        return std::vector<long long>(t_[i].shape, t_[i].shape + t_[i].ndim);
    }

    long long elements(int i) const {
        long long n = 1;
        for (int d = 0; d < t_[i].ndim; ++d) n *= t_[i].shape[d];
        return n;
    }

    const simpler_tensor& tensor(int i) const { return t_[i]; }
    const simpler_scalar& scalar(int i) const { return s_[i]; }
    std::string where(int i) const {
        return "kernel '" + kernel_ + "': tensor " + std::to_string(i) + " ";
    }

private:
    std::string kernel_;
    const simpler_tensor* t_;
    int nt_;
    const simpler_scalar* s_;
    int ns_;
};

inline bool is_float(int dtype) {
    return dtype == SIMPLER_F16 || dtype == SIMPLER_BF16 || dtype == SIMPLER_F32 ||
           dtype == SIMPLER_F64;
}

template <typename T>
T scalar_as(const simpler_scalar& s) {
    return is_float(s.dtype) ? static_cast<T>(s.f) : static_cast<T>(s.i);
}

}  // namespace simkernels

#endif  // SIMPLER_SIMKERNELS_PLAN_H
