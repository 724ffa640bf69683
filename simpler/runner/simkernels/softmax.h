// The simulated card's softmax kernel.
#ifndef SIMPLER_SIMKERNELS_SOFTMAX_H
#define SIMPLER_SIMKERNELS_SOFTMAX_H

#include "plan.h"

#include <cmath>

namespace simkernels {

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

}  // namespace simkernels

#endif  // SIMPLER_SIMKERNELS_SOFTMAX_H
