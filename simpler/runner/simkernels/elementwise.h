// The simulated card's vector_add and scale kernels.
#ifndef SIMPLER_SIMKERNELS_ELEMENTWISE_H
#define SIMPLER_SIMKERNELS_ELEMENTWISE_H

#include "plan.h"

#include <cstdint>

namespace simkernels {

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

}  // namespace simkernels

#endif  // SIMPLER_SIMKERNELS_ELEMENTWISE_H
