#pragma once

#include <sys/types.h>

#include <functional>
#include <ios>
#include <string>
#include <vector>

namespace santral::test {

// A child process (fork and exec) with its output in a log file. The destructor terminates it
// (SIGTERM, then SIGKILL after a grace period) and reaps it; it is killed if the test dies.
class Process {
 public:
  Process(std::vector<std::string> argv, std::string log_path);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  // Sends `signal`; for SIGTERM/SIGKILL also waits for the exit. Returns the exit status
  // (as waitpid reports it) or -1 when not waited for.
  int signal(int signal);
  // SIGTERM and wait up to `grace_ms`, then SIGKILL. Returns waitpid's status.
  int terminate(int grace_ms = 5000);
  // Waits up to `timeout_ms` for the process to exit by itself; waitpid's status, or -1.
  int wait(int timeout_ms) { return wait_exit(timeout_ms); }
  void pause();   // SIGSTOP: the process holds its sockets but answers nothing
  void resume();  // SIGCONT
  const std::string& log_path() const { return log_path_; }
  std::string log() const;
  // What this process wrote: the log without what earlier processes appended to the same file.
  std::string log_of_this_run() const;

 private:
  int wait_exit(int timeout_ms);

  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = 0;
  std::string log_path_;
  std::streamoff log_start_ = 0;
};

// Polls `ready` every few milliseconds until it returns true or `timeout_ms` passes.
bool wait_until(const std::function<bool()>& ready, int timeout_ms);

}  // namespace santral::test
