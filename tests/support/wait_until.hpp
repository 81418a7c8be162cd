// Waiting on a condition in a test: polled until it holds or a deadline passes, never a fixed
// sleep that is too short on a loaded machine and too long everywhere else.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

namespace clef::testing {

/// Polls `condition` every millisecond or so until it is true (returns true) or `limit` has
/// passed: then the test fails, saying what never happened, and it returns false.
template <typename Condition>
bool wait_until(Condition condition, const std::string& what,
                std::chrono::milliseconds limit = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "gave up after " << limit.count() << " ms waiting for " << what;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace clef::testing
