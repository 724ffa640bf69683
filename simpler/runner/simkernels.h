// The simulated card's kernels: each one's signature check and its body.
//
// Python checks a known kernel's arguments before they reach C++; these checks
// are the card's own, so a caller that bypasses Python (or a future binding)
// gets SIMPLER_RC_INVALID_ARGUMENT and a message instead of a wild write.
#ifndef SIMPLER_SIMKERNELS_H
#define SIMPLER_SIMKERNELS_H

#include "runner.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
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

template <typename T>
Plan elementwise(const Args& args, long long count, bool scaled) {
    const T* a = static_cast<const T*>(args.tensor(0).data);
    const T* b = scaled ? nullptr : static_cast<const T*>(args.tensor(1).data);
    T* out = static_cast<T*>(args.tensor(scaled ? 1 : 2).data);
    const T alpha = scaled ? scalar_as<T>(args.scalar(0)) : T(1);
    Plan plan;
    plan.rows = count;
    plan.body = [=](long long begin, long long end, const std::atomic<bool>&) {
        for (long long i = begin; i < end; ++i) out[i] = scaled ? a[i] * alpha : a[i] + b[i];
    };
    return plan;
}

// vector_add (a, b -> out) and scale (a -> out, alpha), on four dtypes.
inline std::string plan_elementwise(const Args& args, bool scaled, Plan& plan) {
    std::string problem = scaled ? args.check_counts({SIMPLER_IN, SIMPLER_OUT}, 1)
                                 : args.check_counts({SIMPLER_IN, SIMPLER_IN, SIMPLER_OUT}, 0);
    if (problem.empty()) {
        problem = args.check_dtype(0, {SIMPLER_F32, SIMPLER_F64, SIMPLER_I32, SIMPLER_I64});
    }
    for (int i = 1; problem.empty() && i < (scaled ? 2 : 3); ++i) problem = args.check_same(0, i);
    if (problem.empty() && scaled && !is_float(args.tensor(0).dtype) &&
        is_float(args.scalar(0).dtype)) {
        problem = "kernel 'scale': a floating alpha for an integer tensor";
    }
    if (!problem.empty()) return problem;
    const long long n = args.elements(0);
    switch (args.tensor(0).dtype) {
        case SIMPLER_F32: plan = elementwise<float>(args, n, scaled); break;
        case SIMPLER_F64: plan = elementwise<double>(args, n, scaled); break;
        case SIMPLER_I32: plan = elementwise<std::int32_t>(args, n, scaled); break;
        default: plan = elementwise<std::int64_t>(args, n, scaled); break;
    }
    return "";
}

inline std::string plan_matmul(const Args& args, Plan& plan) {
    std::string problem = args.check_counts({SIMPLER_IN, SIMPLER_IN, SIMPLER_OUT}, 0);
    for (int i = 0; problem.empty() && i < 3; ++i) problem = args.check_dtype(i, {SIMPLER_F32});
    for (int i = 0; problem.empty() && i < 3; ++i) {
        if (args.tensor(i).ndim != 2) problem = args.where(i) + "is not 2-D";
    }
    if (!problem.empty()) return problem;
    const long long m = args.tensor(0).shape[0], k = args.tensor(0).shape[1];
    const long long n = args.tensor(1).shape[1];
    if (args.tensor(1).shape[0] != k || args.extents(2) != std::vector<long long>{m, n}) {
        return "kernel 'matmul': shapes are not aligned";
    }
    const float* a = static_cast<const float*>(args.tensor(0).data);
    const float* b = static_cast<const float*>(args.tensor(1).data);
    float* out = static_cast<float*>(args.tensor(2).data);
    plan.rows = m;
    plan.body = [=](long long begin, long long end, const std::atomic<bool>& cancelled) {
        for (long long i = begin; i < end && !cancelled.load(std::memory_order_relaxed); ++i) {
            float* row = out + i * n;
            std::fill(row, row + n, 0.0f);
            for (long long kk = 0; kk < k; ++kk) {
                const float a_ik = a[i * k + kk];
                const float* b_row = b + kk * n;
                for (long long j = 0; j < n; ++j) row[j] += a_ik * b_row[j];
            }
        }
    };
    return "";
}

inline std::string plan_softmax(const Args& args, Plan& plan) {
    std::string problem = args.check_counts({SIMPLER_IN, SIMPLER_OUT}, 0);
    if (problem.empty()) problem = args.check_dtype(0, {SIMPLER_F32});
    if (problem.empty()) problem = args.check_same(0, 1);
    if (problem.empty() && (args.tensor(0).ndim == 0 || args.tensor(0).shape[args.tensor(0).ndim - 1] == 0)) {
        problem = "kernel 'softmax': needs a non-empty last axis";
    }
    if (!problem.empty()) return problem;
    const long long width = args.tensor(0).shape[args.tensor(0).ndim - 1];
    const float* in_all = static_cast<const float*>(args.tensor(0).data);
    float* out_all = static_cast<float*>(args.tensor(1).data);
    plan.rows = args.elements(0) / width;
    plan.body = [=](long long begin, long long end, const std::atomic<bool>&) {
        for (long long r = begin; r < end; ++r) {
            const float* in = in_all + r * width;
            float* out = out_all + r * width;
            const float peak = *std::max_element(in, in + width);
            double total = 0.0;
            for (long long j = 0; j < width; ++j) {
                out[j] = std::exp(in[j] - peak);
                total += out[j];
            }
            for (long long j = 0; j < width; ++j) out[j] = static_cast<float>(out[j] / total);
        }
    };
    return "";
}

// The plan for `kernel`, or the reason its arguments are refused.
inline std::string plan_kernel(const std::string& kernel, const Args& args, Plan& plan) {
    if (kernel == "noop" || kernel == "spin") {
        plan.spins = kernel == "spin";
        return args.check_counts({}, 0);
    }
    if (kernel == "vector_add") return plan_elementwise(args, false, plan);
    if (kernel == "scale") return plan_elementwise(args, true, plan);
    if (kernel == "matmul") return plan_matmul(args, plan);
    if (kernel == "softmax") return plan_softmax(args, plan);
    return "unknown kernel '" + kernel + "' (known: noop, spin, vector_add, scale, matmul, softmax)";
}

}  // namespace simkernels

#endif  // SIMPLER_SIMKERNELS_H
