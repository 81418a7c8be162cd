// run_batch and decide_all turning the application's own loop (BatchOptions::drive_loop): with a
// source that never waits, the whole batch runs on the calling thread — no thread of clef's at
// all — and everything the threaded engine promises still holds: every index once, order, a bad
// item, the read-ahead bound, a cancel or a reader heard from another thread, a sink that throws.
#include <gtest/gtest.h>
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include "clef/clef.hpp"
#include "fake_server.hpp"
#include "held_answers.hpp"
#include "thread_count.hpp"
#include "ticket.hpp"
#include "wait_until.hpp"

namespace {

using clef::ErrorKind;
using clef::testing::FakeServer;
using clef::testing::ticket;
using namespace std::chrono_literals;

clef::Client client_on(const std::shared_ptr<clef::DrivenCurlLoop>& loop,
                       const FakeServer& server) {
  clef::ClientOptions options;
  options.base_url = server.base_url();
  options.retry.initial_backoff = 1ms;
  options.retry.max_backoff = 2ms;
  options.async_transport = loop;
  return clef::Client::create(options).value();
}

/// A client on a loop with no thread, and the options that have run_batch turn it.
struct Driven {
  explicit Driven(const FakeServer& server) : client(client_on(loop, server)) {
    batch.drive_loop = loop;
  }
  std::shared_ptr<clef::DrivenCurlLoop> loop = clef::make_driven_curl_loop();
  clef::Client client;
  clef::BatchOptions batch;
};

TEST(BatchDriven, AFileLikeSourceRunsTheWholeBatchOnTheCallingThread) {
  FakeServer server;
  server.set_latency(2ms);
  Driven driven(server);
  const int before = clef::testing::client_threads();
  const auto caller = std::this_thread::get_id();
  for (const bool ordered : {false, true}) {
    clef::BatchOptions options = driven.batch;
    options.concurrency = 8;
    options.ordered = ordered;
    options.source_never_waits = true;
    int next = 0;
    std::size_t delivered = 0;
    std::size_t most_ahead = 0;
    int most_threads = 0;
    std::vector<std::size_t> order;
    const auto summary = clef::run_batch(
        driven.client,
        [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
          EXPECT_EQ(std::this_thread::get_id(), caller);
          if (next == 300) return std::nullopt;
          most_ahead = std::max(most_ahead, static_cast<std::size_t>(next) + 1 - delivered);
          if (next++ == 123)
            return clef::Result<clef::DecisionRequest>(
                clef::make_error(ErrorKind::invalid_input, "bad line"));
          return clef::Result<clef::DecisionRequest>(ticket(next - 1));
        },
        [&](std::size_t index, clef::Result<clef::Decision>&& result) {
          EXPECT_EQ(std::this_thread::get_id(), caller);
          EXPECT_EQ(result.ok(), index != 123) << index;
          most_threads = std::max(most_threads, clef::testing::client_threads());
          order.push_back(index);
          ++delivered;
        },
        options);
    EXPECT_EQ(summary.succeeded, 299u);
    EXPECT_EQ(summary.failed, 1u);
    std::vector<std::size_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(sorted.size(), 300u);
    for (std::size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], i);
    if (ordered) {
      EXPECT_EQ(order, sorted);
    }
    EXPECT_LE(most_ahead, (ordered ? 8 : 2) * options.concurrency);
    EXPECT_EQ(most_threads, before) << "a thread of clef's beside the caller's";
  }
  // decide_all on the same loop: the answers in order, still no thread.
  clef::BatchOptions options = driven.batch;
  options.concurrency = 4;
  std::vector<clef::DecisionRequest> requests;
  for (int i = 0; i < 40; ++i) requests.push_back(ticket(i));
  const auto results = clef::decide_all(driven.client, requests, options);
  ASSERT_EQ(results.size(), 40u);
  for (const auto& result : results) EXPECT_TRUE(result.ok());
  EXPECT_EQ(clef::testing::client_threads(), before);
}

TEST(BatchDriven, ACancelFromAnotherThreadEndsTheBatchWhileItTurnsTheLoop) {
  // Every request waits at a server that holds its answers: the caller sits in the loop's poll,
  // and the cancel, made on another thread, must reach it at once (no answer can end it first).
  FakeServer server;
  clef::testing::HeldAnswers held(server, 0);
  Driven driven(server);
  clef::BatchOptions options = driven.batch;
  options.concurrency = 4;
  options.source_never_waits = true;
  clef::CancelSource cancel;
  options.cancel = cancel.token();
  std::atomic<int> sent{0};
  std::chrono::steady_clock::time_point cancelled_at;
  std::thread canceller([&] {
    clef::testing::wait_until([&] { return held.waiting() >= 4; }, "4 at the server");
    cancelled_at = std::chrono::steady_clock::now();
    cancel.cancel();
  });
  int next = 0;
  std::size_t cancelled = 0;
  const auto summary = clef::run_batch(
      driven.client,
      [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
        if (next == 10) return std::nullopt;
        ++sent;
        return clef::Result<clef::DecisionRequest>(ticket(next++));
      },
      [&](std::size_t, clef::Result<clef::Decision>&& result) {
        cancelled += !result && result.error().kind == ErrorKind::cancelled;
      },
      options);
  const auto ended = std::chrono::steady_clock::now();
  canceller.join();
  held.release();
  EXPECT_TRUE(summary.stopped);
  EXPECT_EQ(summary.started, static_cast<std::size_t>(sent.load()));
  EXPECT_EQ(cancelled, summary.started) << "every item read is delivered, cancelled";
  EXPECT_LT(ended - cancelled_at, 1s) << "the cancel waited for the server";
}

TEST(BatchDriven, ASourceThatWaitsIsReadOnItsOwnThreadAndHeardAtOnce) {
  // A source fed by another thread (a pipe's lines): the reader's thread hands each item over
  // while the caller turns the loop; an item must not wait for the next one, nor for a timeout.
  FakeServer server;
  Driven driven(server);
  clef::BatchOptions options = driven.batch;
  options.concurrency = 4;
  std::mutex mutex;
  std::condition_variable fed;
  std::deque<int> lines;
  bool closed = false;
  std::atomic<std::size_t> delivered{0};
  std::thread writer([&] {
    for (int i = 0; i < 20; ++i) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        lines.push_back(i);
      }
      fed.notify_one();
      // The next line only once this one is answered: a source that waits between items.
      clef::testing::wait_until([&] { return delivered.load() > static_cast<std::size_t>(i); },
                                "line answered");
    }
    std::lock_guard<std::mutex> lock(mutex);
    closed = true;
    fed.notify_one();
  });
  const auto summary = clef::run_batch(
      driven.client,
      [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
        std::unique_lock<std::mutex> lock(mutex);
        fed.wait(lock, [&] { return closed || !lines.empty(); });
        if (lines.empty()) return std::nullopt;
        const int line = lines.front();
        lines.pop_front();
        return clef::Result<clef::DecisionRequest>(ticket(line));
      },
      [&](std::size_t, clef::Result<clef::Decision>&& result) {
        EXPECT_TRUE(result.ok());
        ++delivered;
      },
      options);
  writer.join();
  EXPECT_EQ(summary.succeeded, 20u);
  EXPECT_EQ(delivered.load(), 20u);
}

TEST(BatchDriven, ASinkThatThrowsLetsTheTransfersInFlightFinishFirst) {
  // The sink throws at the first result while others are at the server: run_batch turns the
  // loop until their callbacks have run (they write into the run's state) before passing the
  // exception on.
  FakeServer server;
  server.set_script(
      [](const clef::MockRequest& request, int) -> std::optional<clef::testing::Scripted> {
        if (request.body.find("ticket 0\"") != std::string::npos) return std::nullopt;
        return clef::testing::Scripted{
            400, R"({"error":"bad request"})", "application/json", {}, 300ms};
      });
  Driven driven(server);
  clef::BatchOptions options = driven.batch;
  options.concurrency = 10;
  options.source_never_waits = true;
  int next = 0;
  EXPECT_THROW(clef::run_batch(
                   driven.client,
                   [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
                     if (next == 10) return std::nullopt;
                     return clef::Result<clef::DecisionRequest>(ticket(next++));
                   },
                   [&](std::size_t, clef::Result<clef::Decision>&&) {
                     throw std::runtime_error("the sink's disk is full");
                   },
                   options),
               std::runtime_error);
  EXPECT_EQ(server.request_count(), 10);
}

// Waiting where no one else will turn the loop is refused at once; it used to wait for ever.
TEST(BatchDriven, WaitingOnTheThreadThatTurnsTheLoopIsRefusedNotAHang) {
  FakeServer server;
  Driven driven(server);
  driven.loop->run_once();  // this thread turns the loop from now on
  const auto decided = driven.client.decide(ticket(0));
  ASSERT_FALSE(decided.ok());
  EXPECT_EQ(decided.error().kind, ErrorKind::invalid_input);
  EXPECT_NE(decided.error().message.find("turns its loop"), std::string::npos)
      << decided.error().message;
  EXPECT_THROW((void)clef::decide_all(driven.client, {ticket(1)}, clef::BatchOptions{}),
               std::logic_error);
  EXPECT_EQ(server.request_count(), 0);
  // Given the loop to turn, the batch turns it here.
  const auto results = clef::decide_all(driven.client, {ticket(2)}, driven.batch);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].ok());
  // Another thread may wait while this one turns the loop.
  std::atomic<bool> answered{false};
  std::optional<clef::Result<clef::Decision>> from_there;
  std::thread other([&] {
    from_there = driven.client.decide(ticket(3));
    answered = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (!answered && std::chrono::steady_clock::now() < deadline) {
    pollfd work{driven.loop->descriptor(), POLLIN, 0};
    ::poll(&work, 1, static_cast<int>(driven.loop->timeout().count()));
    driven.loop->run_once();
  }
  other.join();
  ASSERT_TRUE(from_there.has_value());
  EXPECT_TRUE(from_there->ok()) << from_there->error().to_string();
}

TEST(BatchDriven, ABatchStartedInOneOfItsOwnCallbacksIsRefusedNotAHang) {
  FakeServer server;
  clef::ClientOptions options;
  options.base_url = server.base_url();
  options.async_transport = clef::make_curl_loop();
  const clef::Client client = clef::Client::create(options).value();
  std::promise<std::string> what;
  client.submit(ticket(0), [&](clef::Result<clef::Decision>) {
    try {
      (void)clef::decide_all(client, {ticket(1)});
      what.set_value("decide_all returned");
    } catch (const std::logic_error& refused) {
      what.set_value(refused.what());
    }
  });
  auto future = what.get_future();
  ASSERT_EQ(future.wait_for(60s), std::future_status::ready) << "decide_all waited for itself";
  EXPECT_NE(future.get().find("own callbacks"), std::string::npos);
}

}  // namespace
