// Controls of the simulated card that have no place on real hardware: the
// injected faults (SIMPLER_SIM_FAULTS) and the test each launch belongs to,
// which the fault selectors match against.
#ifndef SIMPLER_SIMCARD_H
#define SIMPLER_SIMCARD_H

// Launch-fault kinds for simpler_sim_add_launch_fault.
#define SIMPLER_SIM_HANG 1
#define SIMPLER_SIM_LAUNCH_FAIL 2
// An op that cannot be stopped in process (a GPU kernel past the op-timeout): the card
// stays stuck until the process that holds it ends.
#define SIMPLER_SIM_STUCK 3

extern "C" {
void simpler_sim_clear_faults();
void simpler_sim_set_flags(int force_reset_fail, int drain_false_negative, int init_fail);
// attempt 0 matches every attempt.
void simpler_sim_add_launch_fault(int kind, const char* selector, int attempt);
void simpler_sim_set_test(const char* nodeid, int attempt);
}

#endif  // SIMPLER_SIMCARD_H
