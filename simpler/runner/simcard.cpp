// The simulated NPU card: simpler's embedded default device.
//
// It fails the way the hardware does where that hurts a test suite:
//  - kernels run on AICore threads; an op that outlives the op-timeout is
//    reaped and leaves the card sticky-errored;
//  - the sticky error lives in process-global state per device id, so every
//    later launch, soft reset or init in this process fails too;
//  - only a force reset clears it, for that card alone;
//  - an op that cannot be stopped in process (fault `stuck`: a GPU kernel past
//    the op-timeout) leaves the card stuck: nothing in the process clears it, and
//    no call waits on it, so the process can end and be replaced;
//  - a fresh process starts with clean cards.
#include "runner.h"
#include "simcard.h"
#include "simkernels.h"
#include "launch_faults.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Platform {
    const char* name;
    int op_timeout_rc;
    int poisoned_init_rc;
    const char* poisoned_init_where;
};

// The codes and calls the hardware reports (see docs/design.md, Error codes).
const Platform kPlatforms[] = {
    {"a5sim", 507046, 62, "halResMap"},
    {"a2a3sim", 507018, 507899, "rtMalloc"},
};
constexpr int kLaunchFaultRc = 207001;
constexpr int kUnusableRc = -1;
constexpr const char* kStreamSyncWhere = "aclrtSynchronizeStreamWithTimeout";
constexpr const char* kDeviceSyncWhere = "aclrtSynchronizeDeviceWithTimeout";
constexpr const char* kLaunchWhere = "rtKernelLaunchWithHandleV2";
constexpr const char* kForceResetWhere = "aclrtResetDeviceForce";
constexpr int kAicoreCount = 4;

const Platform* find_platform(const char* name) {
    if (name == nullptr) return nullptr;
    for (const Platform& p : kPlatforms) {
        if (std::strcmp(p.name, name) == 0) return &p;
    }
    return nullptr;
}

// One physical card. Its timed mutex serialises work on this card only, so a
// reset of one card never waits for another.
struct Card {
    std::timed_mutex mu;
    int sticky_rc = 0;
    std::string sticky_where;
    // Set once, never cleared in this process; checked before taking `mu` so that no call
    // waits on a stuck card. stuck_rc/stuck_where are written before the flag, never again.
    std::atomic<bool> stuck{false};
    int stuck_rc = 0;
    std::string stuck_where;
};

simpler_shared::PerDevice<Card> g_cards;

Card& card_for(int device) { return g_cards.get(device); }

// The injected launch faults: each fails every launch of the selected test.
simpler_shared::LaunchFaults g_launch_faults;

std::mutex g_faults_mu;  // the flag faults below
bool g_force_reset_fail = false;
bool g_drain_false_negative = false;
bool g_init_fail = false;

int matching_launch_fault() { return g_launch_faults.match(); }

bool flag(const bool& which) {
    std::lock_guard<std::mutex> lock(g_faults_mu);
    return which;
}

// One kernel launch, shared by the AICore threads that execute its blocks.
struct Launch {
    const simkernels::Plan* plan;
    std::atomic<bool> cancelled{false};
    std::mutex mu;
    std::condition_variable done_cv;
    int blocks_left = 0;
};

// spin never finishes by itself: only the op-timeout reaper stops it.
void spin_until_reaped(Launch& l) {
    while (!l.cancelled.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void run_block(Launch& l, int core, int cores) {
    // Every kernel splits its leading dimension across the AICores.
    const long long rows = l.plan->rows;
    const long long begin = rows * core / cores, end = rows * (core + 1) / cores;
    if (l.plan->spins) {
        spin_until_reaped(l);
    } else if (l.plan->body) {
        l.plan->body(begin, end, l.cancelled);
    }
    std::lock_guard<std::mutex> lock(l.mu);
    if (--l.blocks_left == 0) l.done_cv.notify_all();
}

class SimRunner final : public simpler::DeviceRunner {
public:
    SimRunner(const Platform& platform, int device, int op_timeout_ms)
        : platform_(platform), device_(device), op_timeout_ms_(op_timeout_ms),
          card_(card_for(device)) {}

    int init() override {
        std::lock_guard<std::timed_mutex> lock(card_.mu);
        if (flag(g_init_fail)) {
            return fail(platform_.poisoned_init_rc, platform_.poisoned_init_where,
                        "injected init_fail: device context could not be opened");
        }
        return open_context("init failed");
    }

    int run(const char* kernel, const simpler_tensor* tensors, int n_tensors,
            const simpler_scalar* scalars, int n_scalars) override {
        if (unusable_) {
            return fail(kUnusableRc, "run",
                        "runner is unusable after rc " + std::to_string(cause_rc_) + " at " +
                            cause_where_ + "; finalize it and build a new one");
        }
        if (!open_) return fail(kUnusableRc, "run", "runner is not initialized: call init()");
        std::string name = kernel ? kernel : "";
        simkernels::Plan plan;
        // A refused call never reached the card: the runner stays usable.
        std::string refused = simkernels::plan_kernel(
            name, simkernels::Args(name, tensors, n_tensors, scalars, n_scalars), plan);
        if (!refused.empty()) return fail(SIMPLER_RC_INVALID_ARGUMENT, "run", refused);

        std::lock_guard<std::timed_mutex> lock(card_.mu);
        if (card_.sticky_rc != 0) {
            // Another runner poisoned the card: allocating for this launch fails.
            return poison_runner(platform_.poisoned_init_rc, platform_.poisoned_init_where,
                                 sticky_story("launch failed"));
        }
        int fault = matching_launch_fault();
        if (fault == SIMPLER_SIM_LAUNCH_FAIL) {
            return poison_card(kLaunchFaultRc, kLaunchWhere, "injected launch_fail on " + name);
        }
        if (fault == SIMPLER_SIM_HANG || fault == SIMPLER_SIM_STUCK) {
            name = "spin";
            plan.spins = true;
        }
        bool finished = execute(name, plan);
        if (fault == SIMPLER_SIM_STUCK) {  // its AICores are reaped; the card acts as if not
            return stick_card(platform_.op_timeout_rc, kStreamSyncWhere,
                              "op '" + std::string(kernel) + "' is still running past the " +
                                  "op-timeout of " + std::to_string(op_timeout_ms_) +
                                  " ms and cannot be stopped in process");
        }
        if (!finished) {
            return poison_card(platform_.op_timeout_rc, kStreamSyncWhere,
                               "op '" + name + "' exceeded the op-timeout of " +
                                   std::to_string(op_timeout_ms_) + " ms and was reaped");
        }
        return ok();
    }

    int drain(int timeout_ms) override {
        if (stuck()) return fail(card_.stuck_rc, kDeviceSyncWhere, stuck_story("drain"));
        std::unique_lock<std::timed_mutex> lock(card_.mu, std::defer_lock);
        if (!lock.try_lock_for(std::chrono::milliseconds(std::max(timeout_ms, 0)))) {
            return fail(platform_.op_timeout_rc, kDeviceSyncWhere,
                        "drain timed out after " + std::to_string(timeout_ms) + " ms");
        }
        // The false negative seen on a2a3 hardware: the drain says all is well.
        if (card_.sticky_rc != 0 && !flag(g_drain_false_negative)) {
            return fail(card_.sticky_rc, kDeviceSyncWhere, sticky_story("drain"));
        }
        return ok();
    }

    int soft_reset() override {
        std::lock_guard<std::timed_mutex> lock(card_.mu);
        open_ = false;
        return open_context("soft reset (rtDeviceReset) re-init failed");
    }

    int force_reset() override {
        if (stuck()) return fail(card_.stuck_rc, kForceResetWhere, stuck_story("force reset"));
        std::lock_guard<std::timed_mutex> lock(card_.mu);
        return force_reset_locked();
    }

    int probe() override {
        if (stuck()) return 0;
        std::lock_guard<std::timed_mutex> lock(card_.mu);
        return card_.sticky_rc == 0 ? 1 : 0;
    }

    int finalize() override {
        if (stuck()) {
            open_ = false;
            return fail(card_.stuck_rc, "finalize", stuck_story("finalize"));
        }
        std::lock_guard<std::timed_mutex> lock(card_.mu);
        if (unusable_) {
            int rc = force_reset_locked();
            if (rc != 0) return rc;
        }
        open_ = false;
        if (card_.sticky_rc != 0) return fail(card_.sticky_rc, "finalize", sticky_story("finalize"));
        return ok();
    }

    int unusable() const override {
        if (stuck()) return SIMPLER_UNUSABLE_PROCESS_MUST_END;
        return unusable_ ? SIMPLER_UNUSABLE : 0;
    }
    const char* last_where() const override { return last_.where().c_str(); }
    const char* last_message() const override { return last_.message().c_str(); }

private:
    bool stuck() const { return card_.stuck.load(); }

    int force_reset_locked() {
        open_ = false;
        if (card_.sticky_rc != 0 && flag(g_force_reset_fail)) {
            return fail(card_.sticky_rc, kForceResetWhere,
                        sticky_story("injected force_reset_fail: force reset had no effect"));
        }
        card_.sticky_rc = 0;
        card_.sticky_where.clear();
        unusable_ = false;
        return ok();
    }

    // Runs the launch on the card's AICore threads; false when it was reaped.
    bool execute(const std::string& kernel, const simkernels::Plan& plan) {
        if (kernel == "noop" || (!plan.spins && plan.rows == 0)) return true;
        Launch launch;
        launch.plan = &plan;
        const long long rows = plan.spins ? 1 : plan.rows;
        const int cores = static_cast<int>(std::max(1LL, std::min<long long>(kAicoreCount, rows)));
        launch.blocks_left = cores;
        std::vector<std::thread> aicores;
        for (int core = 0; core < cores; ++core) {
            aicores.emplace_back(run_block, std::ref(launch), core, cores);
        }
        bool finished;
        {
            std::unique_lock<std::mutex> lock(launch.mu);
            finished = launch.done_cv.wait_for(lock, std::chrono::milliseconds(op_timeout_ms_),
                                               [&] { return launch.blocks_left == 0; });
        }
        if (!finished) launch.cancelled.store(true);
        for (std::thread& t : aicores) t.join();
        return finished;
    }

    int poison_card(int rc, const char* where, const std::string& message) {
        card_.sticky_rc = rc;
        card_.sticky_where = where;
        return poison_runner(rc, where, message + "; device " + std::to_string(device_) +
                                            " is now sticky-errored");
    }

    // Called with the card's mutex held, by the one launch that got stuck.
    int stick_card(int rc, const char* where, const std::string& message) {
        card_.sticky_rc = card_.stuck_rc = rc;
        card_.sticky_where = card_.stuck_where = where;
        card_.stuck.store(true);
        return poison_runner(rc, where, message + "; device " + std::to_string(device_) +
                                            " is stuck: the process holding its context must end");
    }

    int poison_runner(int rc, const char* where, const std::string& message) {
        unusable_ = true;
        cause_rc_ = rc;
        cause_where_ = where;
        return fail(rc, where, message);
    }

    std::string stuck_story(const std::string& what) const {
        return what + ": an op is still running on device " + std::to_string(device_) +
               " (rc " + std::to_string(card_.stuck_rc) + " at " + card_.stuck_where +
               ") and cannot be stopped in process; no reset here helps: the process holding "
               "the context must end";
    }

    std::string sticky_story(const std::string& what) const {
        if (stuck()) return stuck_story(what);
        return what + ": device " + std::to_string(device_) + " is sticky-errored (rc " +
               std::to_string(card_.sticky_rc) + " at " + card_.sticky_where +
               "); only a force reset clears it";
    }

    int fail(int rc, const char* where, const std::string& message) {
        return last_.fail(rc, where, message);
    }
    int ok() { return last_.ok(); }

    // The device context opens (init, a soft reset's re-init) only on a card that is not
    // sticky-errored: a real card refuses both the same way. The caller holds card_.mu.
    int open_context(const char* what) {
        if (card_.sticky_rc != 0) {
            return fail(platform_.poisoned_init_rc, platform_.poisoned_init_where,
                        sticky_story(what));
        }
        open_ = true;
        unusable_ = false;
        return ok();
    }

    const Platform& platform_;
    const int device_;
    const int op_timeout_ms_;
    Card& card_;
    bool open_ = false;
    bool unusable_ = false;
    int cause_rc_ = 0;
    std::string cause_where_;
    simpler_shared::LastCall last_;
};

}  // namespace

extern "C" int simpler_runner_abi() { return SIMPLER_RUNNER_ABI; }

// The simulated card runs every runtime the same way.
extern "C" simpler::DeviceRunner* simpler_create_runner(const char* platform, const char*,
                                                        int device, int op_timeout_ms) {
    const Platform* p = find_platform(platform);
    if (p == nullptr || device < 0 || op_timeout_ms <= 0) return nullptr;
    return new SimRunner(*p, device, op_timeout_ms);
}

extern "C" void simpler_destroy_runner(simpler::DeviceRunner* runner) { delete runner; }

// Relative to the card's own source directory: simpler resolves them there, wherever the
// package is installed (a cached library is shared by every checkout of one source).
extern "C" const char* simpler_kernel_sources(const char* platform, const char* kernel) {
    return find_platform(platform) == nullptr ? nullptr : simkernels::kernel_sources(kernel);
}

extern "C" void simpler_sim_clear_faults() {
    g_launch_faults.clear();
    std::lock_guard<std::mutex> lock(g_faults_mu);
    g_force_reset_fail = g_drain_false_negative = g_init_fail = false;
}

extern "C" void simpler_sim_set_flags(int force_reset_fail, int drain_false_negative,
                                      int init_fail) {
    std::lock_guard<std::mutex> lock(g_faults_mu);
    g_force_reset_fail = force_reset_fail != 0;
    g_drain_false_negative = drain_false_negative != 0;
    g_init_fail = init_fail != 0;
}

extern "C" void simpler_sim_add_launch_fault(int kind, const char* selector, int attempt) {
    g_launch_faults.add(kind, selector, attempt);
}

extern "C" void simpler_sim_set_test(const char* nodeid, int attempt) {
    g_launch_faults.set_test(nodeid, attempt);
}
