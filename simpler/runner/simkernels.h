// The simulated card's kernels: which kernel a launch names, and which sources
// each kernel is built from.
//
// Each kernel lives in a file of its own under simkernels/, so a change to one
// kernel's source can be traced to the tests that launched that kernel alone
// (simpler_kernel_sources, runner.h). What they all share (plan.h, this file)
// is a source of every one of them.
#ifndef SIMPLER_SIMKERNELS_H
#define SIMPLER_SIMKERNELS_H

#include "simkernels/elementwise.h"
#include "simkernels/matmul.h"
#include "simkernels/plan.h"
#include "simkernels/softmax.h"

#include <cstring>
#include <string>

namespace simkernels {

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

// The sources `kernel` is built from, one per line, relative to this file's
// directory; nullptr for a kernel the card does not have.
inline const char* kernel_sources(const char* kernel) {
    if (kernel == nullptr) return nullptr;
    struct Entry {
        const char* kernel;
        const char* sources;
    };
    static const Entry kSources[] = {
        {"noop", "simkernels.h\nsimkernels/plan.h"},
        {"spin", "simkernels.h\nsimkernels/plan.h"},
        {"vector_add", "simkernels/elementwise.h\nsimkernels.h\nsimkernels/plan.h"},
        {"scale", "simkernels/elementwise.h\nsimkernels.h\nsimkernels/plan.h"},
        {"matmul", "simkernels/matmul.h\nsimkernels.h\nsimkernels/plan.h"},
        {"softmax", "simkernels/softmax.h\nsimkernels.h\nsimkernels/plan.h"},
    };
    for (const Entry& entry : kSources) {
        if (std::strcmp(entry.kernel, kernel) == 0) return entry.sources;
    }
    return nullptr;
}

}  // namespace simkernels

#endif  // SIMPLER_SIMKERNELS_H
