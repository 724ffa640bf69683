// What simpler's own runners share: state kept per device for the whole process, what the
// last call said, and the injected launch faults, chosen by the running test
// (SIMPLER_SIM_FAULTS selectors). The
// simulated card and the CUDA runner each compile this into their own library.
#ifndef SIMPLER_LAUNCH_FAULTS_H
#define SIMPLER_LAUNCH_FAULTS_H

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace simpler_shared {

// One State per device id, made on first use and kept until the process ends: a card's
// sticky error outlives every runner on it.
template <typename State>
class PerDevice {
public:
    State& get(int device) {
        std::lock_guard<std::mutex> lock(mu_);
        std::unique_ptr<State>& slot = states_[device];
        if (!slot) slot = std::make_unique<State>();
        return *slot;
    }

private:
    std::mutex mu_;
    std::map<int, std::unique_ptr<State>> states_;
};

// Launch faults of some kinds (the runner's own numbers), each for the tests whose node id
// contains its selector, on every attempt or one (1-based).
class LaunchFaults {
public:
    void clear() {
        std::lock_guard<std::mutex> lock(mu_);
        rules_.clear();
        fired_.clear();
    }

    void add(int kind, const char* selector, int attempt) {
        std::lock_guard<std::mutex> lock(mu_);
        rules_.push_back(Rule{kind, selector ? selector : "", attempt});
    }

    void set_test(const char* nodeid, int attempt) {
        std::lock_guard<std::mutex> lock(mu_);
        nodeid_ = nodeid ? nodeid : "";
        attempt_ = attempt;
    }

    // The kind to inject in this launch of the running test, or 0.
    int match() {
        std::lock_guard<std::mutex> lock(mu_);
        return match_locked();
    }

    // As match(), but only for the test's first launch (per attempt): later launches of the
    // same test run as asked.
    int take_first() {
        std::lock_guard<std::mutex> lock(mu_);
        int kind = match_locked();
        if (kind == 0) return 0;
        return fired_.insert(nodeid_ + "#" + std::to_string(attempt_)).second ? kind : 0;
    }

private:
    struct Rule {
        int kind;
        std::string selector;
        int attempt;  // 0: every attempt
    };

    int match_locked() const {
        for (const Rule& rule : rules_) {
            bool attempt_matches = rule.attempt == 0 || rule.attempt == attempt_;
            if (attempt_matches && nodeid_.find(rule.selector) != std::string::npos) return rule.kind;
        }
        return 0;
    }

    std::mutex mu_;
    std::vector<Rule> rules_;
    std::set<std::string> fired_;
    std::string nodeid_;
    int attempt_ = 1;
};

// What a runner's last call said (DeviceRunner::last_where, last_message): where it failed
// and why, both empty after a success.
class LastCall {
public:
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
    const std::string& where() const { return where_; }
    const std::string& message() const { return message_; }

private:
    std::string where_;
    std::string message_;
};

}  // namespace simpler_shared

#endif  // SIMPLER_LAUNCH_FAULTS_H
