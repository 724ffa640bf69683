// The CUDA runner's launch plans: a launch's arguments checked against its kernel's
// signature, and what cuLaunchKernel needs for it. Nothing here touches the driver, so a
// wrong call is refused (SIMPLER_RC_INVALID_ARGUMENT) before anything reaches the card.
#ifndef SIMPLER_CUDAPLAN_H
#define SIMPLER_CUDAPLAN_H

#include "runner.h"

#include <cstddef>
#include <string>
#include <vector>

namespace cudaplan {

inline size_t dtype_size(int dtype) {
    switch (dtype) {
        case SIMPLER_F32: case SIMPLER_I32: return 4;
        case SIMPLER_F64: case SIMPLER_I64: return 8;
        default: return 0;
    }
}

inline const char* dtype_suffix(int dtype) {
    switch (dtype) {
        case SIMPLER_F32: return "f32";
        case SIMPLER_F64: return "f64";
        case SIMPLER_I32: return "i32";
        case SIMPLER_I64: return "i64";
        default: return nullptr;
    }
}

inline long long element_count(const simpler_tensor& t) {
    long long n = 1;
    for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
    return n;
}

inline bool same_shape(const simpler_tensor& a, const simpler_tensor& b) {
    if (a.ndim != b.ndim) return false;
    for (int i = 0; i < a.ndim; ++i) {
        if (a.shape[i] != b.shape[i]) return false;
    }
    return true;
}

// One launch as the runner will make it: the kernel's symbol, its tensors in order, the
// scalar parameters after the device pointers, and the element count that sizes the grid.
struct LaunchPlan {
    std::string symbol;
    std::vector<const simpler_tensor*> tensors;
    std::vector<long long> sizes;   // trailing long long parameters
    double f_scalar = 0.0;
    long long i_scalar = 0;
    int scalar_dtype = 0;           // 0: no scalar parameter
    long long threads = 1;
};

inline std::string plan_launch(const std::string& kernel, const simpler_tensor* t, int nt,
                        const simpler_scalar* s, int ns, LaunchPlan& plan) {
    auto expect = [&](int tensors, int scalars) -> std::string {
        if (nt != tensors || ns != scalars || (nt > 0 && t == nullptr) || (ns > 0 && s == nullptr)) {
            return "kernel '" + kernel + "' takes " + std::to_string(tensors) + " tensor(s) and " +
                   std::to_string(scalars) + " scalar(s), got " + std::to_string(nt) + " and " +
                   std::to_string(ns);
        }
        for (int i = 0; i < nt; ++i) {
            if (t[i].ndim < 0 || (t[i].ndim > 0 && t[i].shape == nullptr)) return "bad tensor";
            for (int d = 0; d < t[i].ndim; ++d) {
                if (t[i].shape[d] < 0) return "kernel '" + kernel + "': a negative extent";
            }
            bool last = i == nt - 1;
            if (t[i].direction != (last ? SIMPLER_OUT : SIMPLER_IN)) {
                return "kernel '" + kernel + "': tensor " + std::to_string(i) +
                       (last ? " must be the output (OUT)" : " must be an input (IN)");
            }
            if (element_count(t[i]) > 0 && t[i].data == nullptr) return "a null tensor";
        }
        return "";
    };
    std::string problem;
    if (kernel == "noop" || kernel == "spin" || kernel == "trap" || kernel == "illegal_address" ||
        kernel == "device_assert" || kernel == "misaligned") {
        if (!(problem = expect(0, 0)).empty()) return problem;
        plan.symbol = "simpler_" + kernel;
        return "";
    }
    if (kernel == "vector_add" || kernel == "scale") {
        bool add = kernel == "vector_add";
        if (!(problem = expect(add ? 3 : 2, add ? 0 : 1)).empty()) return problem;
        const char* suffix = dtype_suffix(t[0].dtype);
        for (int i = 0; i < nt; ++i) {
            if (suffix == nullptr || t[i].dtype != t[0].dtype || !same_shape(t[i], t[0])) {
                return "kernel '" + kernel + "': tensors must share one shape and one dtype "
                       "of float32, float64, int32, int64";
            }
        }
        if (!add) {
            bool int_kernel = t[0].dtype == SIMPLER_I32 || t[0].dtype == SIMPLER_I64;
            bool float_scalar = s[0].dtype == SIMPLER_F32 || s[0].dtype == SIMPLER_F64 ||
                                s[0].dtype == SIMPLER_F16 || s[0].dtype == SIMPLER_BF16;
            if (int_kernel && float_scalar) return "kernel 'scale': a float alpha for an int array";
            plan.scalar_dtype = t[0].dtype;
            plan.f_scalar = float_scalar ? s[0].f : static_cast<double>(s[0].i);
            plan.i_scalar = float_scalar ? static_cast<long long>(s[0].f) : s[0].i;
        }
        for (int i = 0; i < nt; ++i) plan.tensors.push_back(&t[i]);
        plan.symbol = "simpler_" + kernel + "_" + suffix;
        plan.threads = element_count(t[0]);
        plan.sizes = {plan.threads};
        return "";
    }
    if (kernel == "matmul") {
        if (!(problem = expect(3, 0)).empty()) return problem;
        for (int i = 0; i < 3; ++i) {
            if (t[i].dtype != SIMPLER_F32 || t[i].ndim != 2) return "kernel 'matmul': 2-D float32 only";
        }
        long long m = t[0].shape[0], k = t[0].shape[1], n = t[1].shape[1];
        if (t[1].shape[0] != k || t[2].shape[0] != m || t[2].shape[1] != n) {
            return "kernel 'matmul': shapes are not aligned";
        }
        plan.tensors = {&t[0], &t[1], &t[2]};
        plan.symbol = "simpler_matmul_f32";
        plan.threads = m * n;
        plan.sizes = {m, k, n};
        return "";
    }
    if (kernel == "softmax") {
        if (!(problem = expect(2, 0)).empty()) return problem;
        if (t[0].dtype != SIMPLER_F32 || t[1].dtype != SIMPLER_F32 || !same_shape(t[0], t[1]) ||
            t[0].ndim == 0 || t[0].shape[t[0].ndim - 1] == 0) {
            return "kernel 'softmax': float32 with a non-empty last axis, output of the same shape";
        }
        long long cols = t[0].shape[t[0].ndim - 1];
        plan.tensors = {&t[0], &t[1]};
        plan.symbol = "simpler_softmax_f32";
        plan.threads = element_count(t[0]) / cols;
        plan.sizes = {plan.threads, cols};
        return "";
    }
    return "unknown kernel '" + kernel + "' (known: noop, spin, vector_add, scale, matmul, "
           "softmax, illegal_address, trap, device_assert, misaligned)";
}

}  // namespace cudaplan

#endif  // SIMPLER_CUDAPLAN_H
