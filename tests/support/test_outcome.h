#pragma once

namespace santral::test {

// True once an assertion of the running test case has failed (tests/catch_main.cpp keeps it):
// helpers that own a process print its log then, so a failure seen only in CI can be read.
bool current_test_failed();

}  // namespace santral::test
