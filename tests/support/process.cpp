#include "tests/support/process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace santral::test {

Process::Process(std::vector<std::string> argv, std::string log_path)
    : log_path_(std::move(log_path)) {
  std::vector<char*> args;
  for (auto& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  int log = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) throw std::runtime_error("cannot open " + log_path_);
  log_start_ = ::lseek(log, 0, SEEK_END);
  pid_ = ::fork();
  if (pid_ == 0) {
    // The child dies with the test, even when the test itself is killed.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // A process group of its own, whose parent (the test) is in another group of the session:
    // it is never an orphaned group, to which the kernel sends SIGHUP and SIGCONT whenever a
    // member exits while another is stopped. The test's group may be one (ctest started in
    // the background): a router SIGSTOPped to be left out of its fleet was then continued, and
    // reloaded, as soon as any other process of the test run exited.
    ::setpgid(0, 0);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, STDIN_FILENO);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(log);
  if (pid_ < 0) throw std::runtime_error("could not start " + argv[0]);
  // Here too, so that the group is the child's before any signal the test sends it next (the
  // child's own call may not have run yet; once it has exec'd, this one fails harmlessly).
  ::setpgid(pid_, pid_);
}

Process::~Process() {
  if (!exited_) terminate(3000);
}

bool Process::running() {
  if (exited_) return false;
  pid_t r = ::waitpid(pid_, &status_, WNOHANG);
  if (r == pid_) exited_ = true;
  return !exited_;
}

int Process::wait_exit(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!exited_) {
    pid_t r = ::waitpid(pid_, &status_, WNOHANG);
    if (r == pid_) {
      exited_ = true;
      break;
    }
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return status_;
}

int Process::signal(int sig) {
  if (exited_) return status_;
  ::kill(pid_, sig);
  if (sig == SIGTERM || sig == SIGKILL) return wait_exit(10000);
  return -1;
}

int Process::terminate(int grace_ms) {
  if (exited_) return status_;
  ::kill(pid_, SIGCONT);
  ::kill(pid_, SIGTERM);
  if (wait_exit(grace_ms) != -1) return status_;
  ::kill(pid_, SIGKILL);
  return wait_exit(10000);
}

void Process::pause() {
  ::kill(pid_, SIGSTOP);
}
void Process::resume() {
  ::kill(pid_, SIGCONT);
}

std::string Process::log() const {
  std::ifstream in(log_path_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Process::log_of_this_run() const {
  std::ifstream in(log_path_);
  in.seekg(log_start_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool wait_until(const std::function<bool()>& ready, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return ready();
}

}  // namespace santral::test
