#pragma once
// Test support: processes spinning on a core each, for the life of the object, so a test or a
// benchmark can measure what a busy machine does to our threads (a desktop always has one busy
// process: our own window's render thread is one). Each child dies with this process
// (PR_SET_PDEATHSIG) and after `max_seconds` at most (alarm), whatever happens to the caller.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

namespace fusebox::testing {

class BusyProcesses {
 public:
  explicit BusyProcesses(int count, unsigned max_seconds = 60) {
    for (int i = 0; i < count; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        alarm(max_seconds);
        for (;;) asm volatile("" ::: "memory");
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~BusyProcesses() {
    for (pid_t pid : pids_) kill(pid, SIGKILL);
    for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
  }
  BusyProcesses(const BusyProcesses&) = delete;
  BusyProcesses& operator=(const BusyProcesses&) = delete;
  size_t size() const { return pids_.size(); }

 private:
  std::vector<pid_t> pids_;
};

}  // namespace fusebox::testing
