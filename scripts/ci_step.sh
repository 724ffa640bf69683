#!/usr/bin/env bash
# Run a CI step's command so that the signals GitHub Actions sends the step reach it.
#
# On a timeout or a cancel, Actions sends SIGINT to the step's shell alone, SIGTERM 7.5 s
# later, and kills the process tree 2.5 s after that. A shell waiting on a foreground
# pipeline passes neither signal on: simpler would be killed without its partial summary.
# Here the command runs in a process group of its own (its output teed to LOG) and each
# signal the shell gets goes to that whole group; the shell waits until the group is gone.
#
# Usage: ci_step.sh LOG COMMAND [ARG...]   Exits with COMMAND's exit code.
set -uo pipefail
log=$1
shift
mkdir -p "$(dirname "$log")"
# The tee starts first, outside the command's group: a signal to the group must not cut the log.
exec 3> >(tee "$log")
tee_pid=$!
set -m # job control: the background job below leads a process group of its own
"$@" >&3 2>&1 &
group=$!
trap 'kill -INT -- "-$group" 2>/dev/null' INT
trap 'kill -TERM -- "-$group" 2>/dev/null' TERM
# A trapped signal ends a wait early: wait again while anything of the group still runs.
while kill -0 -- "-$group" 2>/dev/null; do
    wait "$group" 2>/dev/null
    sleep 0.1 # the leader may be gone while the rest of its group finishes
done
wait "$group"
status=$?
exec 3>&- # the tee sees the end of the output: the log is whole before the step ends
wait "$tee_pid"
exit "$status"
