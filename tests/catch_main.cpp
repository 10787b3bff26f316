#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "tests/support/test_outcome.h"

namespace {

bool failed_in_current_test = false;

// Remembers whether the running test case has failed an assertion, so that helpers can say
// more when it has (test_outcome.h).
struct FailureListener : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(const Catch::TestCaseInfo& /*info*/) override {
    failed_in_current_test = false;
  }
  bool assertionEnded(const Catch::AssertionStats& stats) override {
    if (!stats.assertionResult.isOk()) failed_in_current_test = true;
    return true;
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(FailureListener)

namespace santral::test {

bool current_test_failed() {
  return failed_in_current_test;
}

}  // namespace santral::test
