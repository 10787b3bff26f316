// tests/support/process.cpp: a child a test stopped (SIGSTOP) stays stopped until the test
// resumes it, even when the test's own process group is left orphaned (a test run started in
// the background by a shell that has since exited): the kernel sends SIGHUP and SIGCONT to an
// orphaned group that holds a stopped process, which once ended a fleet test's "router cut
// off" early and made the router reload.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <fstream>
#include <string>
#include <utility>

#include "tests/support/process.h"

namespace {

// /proc/<pid>/stat's command name (in parentheses) and state letter.
std::pair<std::string, char> stat_of(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_text, name, state;
  stat >> pid_text >> name >> state;
  return {name, state.empty() ? '?' : state[0]};
}

}  // namespace

TEST_CASE("a stopped child stays stopped when the group that started it is orphaned") {
  int go[2], verdict[2];
  REQUIRE(::pipe2(go, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(verdict, O_CLOEXEC) == 0);
  // launcher: a process group of its own, joined to this test's session only through itself,
  // as the shell that starts a test run in the background is.
  pid_t launcher = ::fork();
  REQUIRE(launcher >= 0);
  if (launcher == 0) {
    ::setpgid(0, 0);
    if (::fork() == 0) {
      // runner: starts and stops a child, then waits until its launcher has exited. It lives
      // through the SIGHUP its orphaned group gets (so would the child, which inherits the
      // disposition: without its own group it is continued, not killed).
      std::signal(SIGHUP, SIG_IGN);
      char result = '?';
      {
        santral::test::Process child({"sleep", "30"}, "/dev/null");
        while (stat_of(child.pid()).first != "(sleep)") {  // started (exec'd), as tests pause
        }
        child.pause();
        while (stat_of(child.pid()).second != 'T') {
        }
        char ready = 'r';
        (void)!::write(verdict[1], &ready, 1);
        char ignored = 0;
        (void)!::read(go[0], &ignored, 1);
        result = stat_of(child.pid()).second;
      }
      (void)!::write(verdict[1], &result, 1);
      ::_exit(0);
    }
    char ready = 0;
    (void)!::read(verdict[0], &ready, 1);
    ::_exit(0);  // the runner's group is left with no tie to the session
  }
  ::close(go[0]);
  ::close(verdict[1]);  // if the runner dies, the read below ends
  int status = 0;
  REQUIRE(::waitpid(launcher, &status, 0) == launcher);
  char go_on = 'g';
  REQUIRE(::write(go[1], &go_on, 1) == 1);
  char state = 0;
  REQUIRE(::read(verdict[0], &state, 1) == 1);
  ::close(go[1]);
  ::close(verdict[0]);
  // The launcher read the runner's "ready", so the child was stopped before the launcher went.
  CHECK(state == 'T');
}
