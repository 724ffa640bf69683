// The simulated card's matmul kernel.
#ifndef SIMPLER_SIMKERNELS_MATMUL_H
#define SIMPLER_SIMKERNELS_MATMUL_H

#include "plan.h"

namespace simkernels {

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

}  // namespace simkernels

#endif  // SIMPLER_SIMKERNELS_MATMUL_H
