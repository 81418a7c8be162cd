// decide_all / run_batch against a real local server with injected faults.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "clef/clef.hpp"
#include "fake_server.hpp"
#include "thread_count.hpp"
#include "wait_until.hpp"

namespace {

using clef::testing::FakeServer;
using clef::testing::Scripted;
using namespace std::chrono_literals;

std::vector<clef::DecisionRequest> tickets(int n, int distinct = 0) {
  std::vector<clef::DecisionRequest> requests;
  for (int i = 0; i < n; ++i) {
    clef::DecisionRequest r;
    r.state = clef::State::text("ticket " + std::to_string(distinct ? i % distinct : i));
    r.questions = {clef::Question::yes_no("urgent", "Is it urgent?")};
    requests.push_back(std::move(r));
  }
  return requests;
}

/// The next of `requests` from `next` on, with an invalid_input error in place of item `bad`
/// (an unparsable input line); nullopt at the end.
std::optional<clef::Result<clef::DecisionRequest>> next_with_a_bad_item(
    const std::vector<clef::DecisionRequest>& requests, std::size_t& next, std::size_t bad) {
  if (next == requests.size()) return std::nullopt;
  if (next++ == bad)
    return clef::Result<clef::DecisionRequest>(
        clef::make_error(clef::ErrorKind::invalid_input, "bad line"));
  return clef::Result<clef::DecisionRequest>(requests[next - 1]);
}

clef::Client client_for(const FakeServer& server) {
  clef::ClientOptions options;
  options.base_url = server.base_url();
  options.retry.initial_backoff = 1ms;
  options.retry.max_backoff = 2ms;
  return clef::Client::create(options).value();
}

TEST(Batch, OneResultPerRequestInOrderUnderFaults) {
  FakeServer server;
  // The first attempt of a third of the items fails (429, 503, dropped); the retry gets through.
  auto faults = std::make_shared<std::atomic<int>>(0);
  server.set_script(clef::testing::first_attempt_faults(3, faults));
  const auto requests = tickets(120);
  auto results = clef::decide_all(client_for(server), requests, {8});
  ASSERT_EQ(results.size(), requests.size());
  for (const auto& r : results) EXPECT_TRUE(r.ok()) << r.error().to_string();
  // The fake model is deterministic: each result belongs to its own request.
  EXPECT_EQ(faults->load(), 40);
  EXPECT_EQ(server.request_count(), 160);
  auto single = client_for(server).decide(requests[17]);
  EXPECT_EQ(results[17]->answers[0].yes_no()->p_true, single->answers[0].yes_no()->p_true);
}

/// run_batch over `requests`: the summary, and how many results were delivered and how many ok.
struct Counted {
  clef::BatchSummary summary;
  std::size_t delivered = 0;
  std::size_t ok = 0;
};

Counted run_counted(const clef::Client& client, const std::vector<clef::DecisionRequest>& requests,
                    const clef::BatchOptions& options) {
  Counted counted;
  std::size_t next = 0;
  counted.summary = clef::run_batch(
      client,
      [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
        if (next == requests.size()) return std::nullopt;
        return clef::Result<clef::DecisionRequest>(requests[next++]);
      },
      [&](std::size_t, clef::Result<clef::Decision>&& result) {
        ++counted.delivered;
        counted.ok += result.ok();
      },
      options);
  return counted;
}

TEST(Batch, AServerAtItsCapacityGetsFewerInFlightNotAStormOfRefusals) {
  FakeServer server;
  server.set_latency(20ms);
  clef::MockFaults faults;
  faults.capacity = 2;  // a third request at once is answered 503 "server busy", no Retry-After
  server.set_faults(faults);
  clef::BatchOptions options;
  options.concurrency = 8;
  const Counted run = run_counted(client_for(server), tickets(200), options);
  EXPECT_EQ(run.delivered, 200u);
  EXPECT_EQ(run.ok, 200u) << "every refused item is sent again";
  // At a fixed 8 in flight, six of every eight sends would be refused, hundreds in all; cutting
  // the limit at each refusal and growing it back slowly probes past 2 only now and then.
  EXPECT_LT(run.summary.throttled, 50u);
  EXPECT_EQ(server.request_count(), static_cast<int>(200 + run.summary.throttled));
}

TEST(Batch, ATokenBucketTeachesAPaceAndFewRequestsAreRefused) {
  FakeServer server;
  clef::MockFaults faults;
  faults.rate_limit = 50;  // a bucket of 50 a second: past it, 429 with Retry-After: 1
  server.set_faults(faults);
  clef::BatchOptions options;
  options.concurrency = 24;
  const Counted run = run_counted(client_for(server), tickets(300), options);
  EXPECT_EQ(run.ok, 300u);
  const int sent = server.request_count();
  EXPECT_EQ(sent, static_cast<int>(300 + run.summary.throttled));
  // Unpaced (pausing for each Retry-After only), every pause refills the bucket and the next
  // volley empties it again with 24 in flight: a quarter of all requests came back 429 here.
  // Paced just under the rate the server accepts, few do.
  EXPECT_GT(run.summary.throttled, 0u) << "the bucket was never reached: the test shows nothing";
  EXPECT_LT(run.summary.throttled * 10, static_cast<std::size_t>(sent));
}

TEST(Batch, OrderedDeliveryAndStreaming) {
  FakeServer server;
  server.set_latency(2ms);
  const auto requests = tickets(60);
  std::size_t next = 0;
  std::vector<std::size_t> order;
  clef::BatchOptions options;
  options.concurrency = 6;
  options.ordered = true;
  auto summary = clef::run_batch(
      client_for(server), [&] { return next_with_a_bad_item(requests, next, 30); },
      [&](std::size_t index, clef::Result<clef::Decision>&& result) {
        order.push_back(index);
        EXPECT_EQ(result.ok(), index != 30);
      },
      options);
  EXPECT_EQ(summary.succeeded, 59u);
  EXPECT_EQ(summary.failed, 1u);
  for (std::size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i);
}

TEST(Batch, PermanentFailuresAreRecordedNotDropped) {
  FakeServer server;
  server.set_script([](const auto&, int call) -> std::optional<Scripted> {
    if (call % 4 == 0) return Scripted{400, R"({"error":"bad question"})"};
    return std::nullopt;
  });
  auto results = clef::decide_all(client_for(server), tickets(40), {4});
  int failed = 0;
  for (const auto& r : results) failed += r.ok() ? 0 : 1;
  EXPECT_EQ(failed, 10);
  EXPECT_EQ(server.request_count(), 40);
}

TEST(Batch, DedupeSendsIdenticalStatesOnce) {
  FakeServer server;
  clef::BatchOptions options;
  options.dedupe = true;
  options.concurrency = 4;
  auto results = clef::decide_all(client_for(server), tickets(50, 5), options);
  EXPECT_EQ(server.request_count(), 5);
  for (const auto& r : results) EXPECT_TRUE(r.ok());
  EXPECT_EQ(results[0]->answers[0].yes_no()->p_true, results[45]->answers[0].yes_no()->p_true);
}

TEST(Batch, RateCapSpacesRequests) {
  FakeServer server;
  clef::BatchOptions options;
  options.concurrency = 4;
  options.max_requests_per_second = 100;
  const auto start = std::chrono::steady_clock::now();
  auto results = clef::decide_all(client_for(server), tickets(21), options);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 195ms);  // 20 gaps of 10 ms
}

TEST(Batch, AnItemFromAStreamIsSentBeforeTheNextOneArrives) {
  // A pipe's next line may not exist yet: the item read goes to the server before the source is
  // asked again (here the source gives its second item only once the first has reached the
  // server; were it held back for more, the wait would run out).
  FakeServer server;
  std::size_t pulled = 0;
  bool waited_in_vain = false;
  clef::BatchOptions options;
  options.concurrency = 16;
  std::size_t delivered = 0;
  clef::run_batch(
      client_for(server),
      [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
        ++pulled;
        if (pulled > 3) return std::nullopt;
        if (pulled > 1) {
          const auto deadline = std::chrono::steady_clock::now() + 5s;
          while (server.request_count() < static_cast<int>(pulled) - 1 &&
                 std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(1ms);
          waited_in_vain |= server.request_count() < static_cast<int>(pulled) - 1;
        }
        return clef::Result<clef::DecisionRequest>(tickets(1)[0]);
      },
      [&](std::size_t, clef::Result<clef::Decision>&&) { ++delivered; }, options);
  EXPECT_FALSE(waited_in_vain) << "an item read was held back waiting for the next";
  EXPECT_EQ(delivered, 3u);
}

TEST(Batch, AfterDeliveryFollowsEachGroupOfResultsAndNothingElse) {
  // 16 in flight answered together: results come back in groups, each followed by one
  // after_delivery (a sink that buffers writes there); repeats (dedupe) and unreadable items
  // (delivered as they are prepared) count as delivered.
  FakeServer server;
  server.set_latency(30ms);
  const auto requests = tickets(96, 48);
  std::size_t next = 0;
  std::string events;  // S: the sink, D: on_duplicate, A: after_delivery (one thread calls all)
  clef::BatchOptions options;
  options.concurrency = 16;
  options.dedupe = true;
  options.on_duplicate = [&](std::size_t, std::size_t) { events += 'D'; };
  options.after_delivery = [&] { events += 'A'; };
  const auto summary = clef::run_batch(
      client_for(server),
      [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
        if (next == requests.size() + 1) return std::nullopt;
        if (next++ == 40)
          return clef::Result<clef::DecisionRequest>(
              clef::make_error(clef::ErrorKind::invalid_input, "bad line"));
        return clef::Result<clef::DecisionRequest>(requests[next - 1 - (next > 41 ? 1 : 0)]);
      },
      [&](std::size_t, clef::Result<clef::Decision>&&) { events += 'S'; }, options);
  EXPECT_EQ(summary.succeeded, 48u);
  EXPECT_EQ(summary.failed, 1u);
  EXPECT_EQ(summary.deduplicated, 48u);
  const auto delivered = static_cast<std::size_t>(std::count(events.begin(), events.end(), 'S') +
                                                  std::count(events.begin(), events.end(), 'D'));
  const auto groups = static_cast<std::size_t>(std::count(events.begin(), events.end(), 'A'));
  EXPECT_EQ(delivered, 97u);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back(), 'A') << "the last results were never followed by after_delivery";
  EXPECT_EQ(events.find("AA"), std::string::npos) << "called with nothing delivered: " << events;
  EXPECT_EQ(events.front(), 'S');
  // How many come back together depends on the machine's load (about 8 alone, 3 in a loaded
  // suite run); one call per result would mean none are.
  EXPECT_LT(groups, delivered) << "results were not grouped: " << events;
}

/// The curl loop, telling when a response's handler (the batch's settling) has returned.
class SettledTransport final : public clef::AsyncTransport {
 public:
  void start(clef::HttpRequest request, clef::ResponseHandler done) override {
    m_inner->start(std::move(request), [this, done](clef::Result<clef::HttpResponse> response) {
      done(std::move(response));
      ++settled;
    });
  }
  void after(std::chrono::milliseconds delay, std::function<void(bool)> task) override {
    m_inner->after(delay, std::move(task));
  }
  bool running_here() const override { return m_inner->running_here(); }
  std::atomic<int> settled{0};

 private:
  std::shared_ptr<clef::AsyncTransport> m_inner = clef::make_curl_loop();
};

TEST(Batch, AStopTheLoopDecidesWhileAnItemIsBeingReadStillEndsTheRun) {
  // The first answer is a 402 (a spent budget): the loop stops the batch while the calling
  // thread is still reading the second item. That item must end as not done, and the run must
  // end (it used to wait for ever for the item it had read).
  FakeServer server;
  server.set_script([](const auto&, int) -> std::optional<Scripted> {
    return Scripted{402, R"({"error":{"message":"Insufficient credits","code":402}})"};
  });
  auto transport = std::make_shared<SettledTransport>();
  clef::ClientOptions client_options;
  client_options.base_url = server.base_url();
  client_options.async_transport = transport;
  const auto client = clef::Client::create(client_options).value();
  clef::BatchOptions options;
  options.concurrency = 1;
  std::size_t pulled = 0;
  std::map<std::size_t, clef::ErrorKind> kinds;
  const auto summary = clef::run_batch(
      client,
      [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
        if (++pulled > 3) return std::nullopt;
        if (pulled == 2)
          clef::testing::wait_until([&] { return transport->settled > 0; }, "the 402 settled");
        return clef::Result<clef::DecisionRequest>(tickets(1)[0]);
      },
      [&](std::size_t index, clef::Result<clef::Decision>&& result) {
        kinds[index] = result ? clef::ErrorKind::invalid_response : result.error().kind;
      },
      options);
  EXPECT_TRUE(summary.quota_exhausted);
  EXPECT_EQ(server.request_count(), 1);
  ASSERT_EQ(kinds.size(), summary.started);
  EXPECT_EQ(kinds[0], clef::ErrorKind::quota_exhausted);
  for (std::size_t i = 1; i < kinds.size(); ++i)
    EXPECT_EQ(kinds[i], clef::ErrorKind::cancelled) << i;
}

/// A source that gives `count` items, then waits (as a pipe whose writer is slow would) until
/// released, and then ends.
struct WaitingSource {
  explicit WaitingSource(std::size_t count) : requests(tickets(static_cast<int>(count))) {}
  std::optional<clef::Result<clef::DecisionRequest>> operator()() {
    if (given < requests.size()) return clef::Result<clef::DecisionRequest>(requests[given++]);
    std::unique_lock<std::mutex> lock(mutex);
    waiting = true;
    released.wait_for(lock, 60s, [&] { return free; });
    return std::nullopt;
  }
  void release() {
    std::lock_guard<std::mutex> lock(mutex);
    free = true;
    released.notify_all();
  }
  bool is_waiting() {
    std::lock_guard<std::mutex> lock(mutex);
    return waiting;
  }
  std::vector<clef::DecisionRequest> requests;
  std::size_t given = 0;
  std::mutex mutex;
  std::condition_variable released;
  bool waiting = false;
  bool free = false;
};

// The source is read on a thread of the run's own: while it waits for input, the results of the
// items it gave are delivered, and a stop ends the run through interrupt_source rather than
// when the next item comes.
TEST(Batch, ASourceThatWaitsHoldsBackNeitherResultsNorAStop) {
  FakeServer server;
  {
    WaitingSource source(3);
    std::atomic<std::size_t> delivered{0};
    clef::BatchSummary summary;
    std::thread run([&] {
      summary = clef::run_batch(
          client_for(server), std::ref(source),
          [&](std::size_t, clef::Result<clef::Decision>&& result) { delivered += result.ok(); });
    });
    EXPECT_TRUE(clef::testing::wait_until([&] { return delivered == 3 && source.is_waiting(); },
                                          "three results while the source waits", 30s));
    source.release();
    run.join();
    EXPECT_EQ(summary.started, 3u);
    EXPECT_EQ(summary.succeeded, 3u);
  }
  {
    WaitingSource source(2);
    std::atomic<bool> stop{false};
    std::atomic<int> interrupted{0};
    std::atomic<bool> returned{false};
    clef::BatchOptions options;
    options.should_stop = [&] { return stop.load(); };
    options.interrupt_source = [&] {
      ++interrupted;
      source.release();
    };
    clef::BatchSummary summary;
    std::thread run([&] {
      summary = clef::run_batch(
          client_for(server), std::ref(source), [](std::size_t, clef::Result<clef::Decision>&&) {},
          options);
      returned = true;
    });
    EXPECT_TRUE(clef::testing::wait_until([&] { return source.is_waiting(); }, "the wait", 30s));
    stop = true;
    EXPECT_TRUE(clef::testing::wait_until([&] { return returned.load(); },
                                          "the run to end without its source's next item", 30s));
    source.release();  // only if the run did not
    run.join();
    EXPECT_EQ(interrupted, 1);
    EXPECT_TRUE(summary.stopped);
    EXPECT_EQ(summary.started, 2u);
  }
}

TEST(Batch, StopFlagEndsTheRunEarly) {
  FakeServer server;
  server.set_latency(5ms);
  std::atomic<bool> stop{false};
  clef::BatchOptions options;
  options.concurrency = 2;
  options.should_stop = [&] { return stop.load(); };
  std::size_t delivered = 0;
  std::size_t pulled = 0;
  auto summary = clef::run_batch(
      client_for(server),
      [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
        if (++pulled == 10) stop = true;
        return clef::Result<clef::DecisionRequest>(tickets(1)[0]);
      },
      [&](std::size_t, clef::Result<clef::Decision>&&) { ++delivered; }, options);
  EXPECT_TRUE(summary.stopped);
  EXPECT_EQ(delivered, summary.started);  // whatever started was delivered
  // The reader runs ahead of the stop by at most 2 x concurrency items (delivered, not sent).
  EXPECT_LE(summary.started, 10u + 2 * options.concurrency);
}

}  // namespace

TEST(Batch, StopsWhenTheServerIsNotThereAtAll) {
  clef::ClientOptions options;
  options.base_url = "http://127.0.0.1:" + std::to_string(clef::testing::refusing_port());
  options.retry.max_attempts = 1;
  const auto client = clef::Client::create(options).value();
  const auto requests = tickets(300);
  std::size_t next = 0;
  std::size_t delivered = 0;
  std::size_t refused = 0;
  clef::BatchOptions batch;
  batch.concurrency = 3;
  batch.stop_when_unreachable = true;
  const auto source = [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
    if (next == requests.size()) return std::nullopt;
    return clef::Result<clef::DecisionRequest>(requests[next++]);
  };
  const auto sink = [&](std::size_t, clef::Result<clef::Decision>&& result) {
    ++delivered;
    refused += !result && result.error().kind == clef::ErrorKind::connection_failed;
  };
  const clef::BatchSummary summary = clef::run_batch(client, source, sink, batch);
  ASSERT_TRUE(summary.unreachable.has_value());
  EXPECT_EQ(summary.unreachable->kind, clef::ErrorKind::connection_failed);
  EXPECT_FALSE(summary.stopped);  // not should_stop's doing
  // 2 x 3 refusals in a row stop it; at most the 3 then in flight come back after (and the 3
  // read ahead for the loop to start come back cancelled, never sent).
  EXPECT_GE(refused, 6u);
  EXPECT_LE(refused, 9u);
  EXPECT_LE(summary.started, 12u);
  EXPECT_EQ(delivered, summary.started);

  // Without the option every item is tried and fails on its own.
  batch.stop_when_unreachable = false;
  next = delivered = refused = 0;
  const clef::BatchSummary all = clef::run_batch(client, source, sink, batch);
  EXPECT_FALSE(all.unreachable.has_value());
  EXPECT_EQ(all.started, 300u);
  EXPECT_EQ(refused, 300u);
}

TEST(Batch, AServerThatAnsweredOnceIsNeverTakenForAbsent) {
  FakeServer server;
  // The first request is answered; every later one is cut off mid-body (connection_failed).
  server.set_script([](const clef::MockRequest&, int call) -> std::optional<Scripted> {
    if (call == 0) return std::nullopt;  // the simulated model answers
    Scripted cut;
    cut.body = R"({"model":"clef-flash","answers":{}})";
    cut.truncate_at = 5;
    return cut;
  });
  clef::ClientOptions options;
  options.base_url = server.base_url();
  options.retry.max_attempts = 1;
  clef::BatchOptions batch;
  batch.concurrency = 1;
  batch.stop_when_unreachable = true;
  const auto results = clef::decide_all(clef::Client::create(options).value(), tickets(40), batch);
  ASSERT_EQ(results.size(), 40u);
  EXPECT_TRUE(results[0].ok());
  for (std::size_t i = 1; i < results.size(); ++i) EXPECT_FALSE(results[i].ok()) << i;
  EXPECT_EQ(server.request_count(), 40);  // each tried: a flaky server fails items one by one
}

TEST(Batch, RunsOnTheLoopWithNoWorkerThreads) {
  // 300 items, 150 in flight, each answered after 200 ms: worker threads would be 150 of them.
  FakeServer server;
  server.set_latency(200ms);
  const auto requests = tickets(300);
  auto client = client_for(server);
  clef::BatchOptions options;
  options.concurrency = 150;
  // A first run opens the 150 connections, and the mock's thread for each of them; the second
  // run, counted, reuses them.
  const int at_start = clef::testing::client_threads();
  EXPECT_EQ(clef::decide_all(client, tickets(150), options).size(), 150u);
  const int before = clef::testing::client_threads();
  EXPECT_LE(before - at_start, 1) << "the loop's thread";
  std::size_t next = 0;
  std::vector<int> seen(requests.size(), 0);
  int most_threads = 0;
  auto summary = clef::run_batch(
      client,
      [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
        if (next == requests.size()) return std::nullopt;
        return clef::Result<clef::DecisionRequest>(requests[next++]);
      },
      [&](std::size_t index, clef::Result<clef::Decision>&& result) {
        EXPECT_TRUE(result.ok()) << index;
        ++seen.at(index);
        most_threads = std::max(most_threads, clef::testing::client_threads());
      },
      options);
  EXPECT_EQ(summary.succeeded, 300u);
  for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << i;
  // No thread per request: the connections are the first run's, on the same loop thread.
  EXPECT_LE(most_threads - before, 1);
  EXPECT_EQ(server.request_count(), 450);
}

TEST(Batch, ASourceThatNeverWaitsIsReadOnTheCallingThreadWithinTheReadersBound) {
  // source_never_waits: the source is called on run_batch's own thread (no reader thread
  // joins the loop's), never more than concurrency items ahead of those in flight; a bad item,
  // every index once and (ordered) the input's order hold as with a reader.
  FakeServer server;
  server.set_latency(2ms);
  const auto requests = tickets(200);
  auto client = client_for(server);
  EXPECT_EQ(clef::decide_all(client, tickets(6), {6}).size(), 6u);  // connections opened
  const int before = clef::testing::client_threads();
  const auto caller = std::this_thread::get_id();
  for (const bool ordered : {false, true}) {
    clef::BatchOptions options;
    options.concurrency = 6;
    options.ordered = ordered;
    options.source_never_waits = true;
    std::size_t next = 0;
    std::size_t delivered = 0;
    std::size_t most_ahead = 0;
    int most_threads = 0;
    std::vector<std::size_t> order;
    auto summary = clef::run_batch(
        client,
        [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
          EXPECT_EQ(std::this_thread::get_id(), caller);
          most_threads = std::max(most_threads, clef::testing::client_threads());
          if (next == requests.size()) return std::nullopt;
          most_ahead = std::max(most_ahead, next + 1 - delivered);
          return next_with_a_bad_item(requests, next, 70);
        },
        [&](std::size_t index, clef::Result<clef::Decision>&& result) {
          order.push_back(index);
          ++delivered;
          EXPECT_EQ(result.ok(), index != 70) << index;
        },
        options);
    EXPECT_EQ(summary.succeeded, 199u);
    EXPECT_EQ(summary.failed, 1u);
    ASSERT_EQ(order.size(), requests.size());
    std::vector<std::size_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < order.size(); ++i) EXPECT_EQ(sorted[i], i);
    EXPECT_EQ(most_threads, before) << "a thread besides the caller's and the loop's";
    if (ordered) {
      EXPECT_EQ(order, sorted);
      // Results held back for an earlier one count against the window, not the read-ahead.
      EXPECT_LE(most_ahead, 8 * options.concurrency);
    } else {
      // Read but not delivered: in flight (6) and read ahead for the loop to start (6), as a
      // reader's thread keeps to.
      EXPECT_LE(most_ahead, 2 * options.concurrency);
      EXPECT_GE(most_ahead, options.concurrency) << "the loop was kept waiting for items";
    }
  }
}

TEST(Batch, ASourceThatNeverWaitsStopsAndThrowsAsOneOnItsOwnThreadWould) {
  FakeServer server;
  server.set_latency(5ms);
  auto client = client_for(server);
  clef::BatchOptions options;
  options.concurrency = 2;
  options.source_never_waits = true;
  std::atomic<bool> stop{false};
  options.should_stop = [&] { return stop.load(); };
  std::size_t delivered = 0;
  std::size_t pulled = 0;
  auto summary = clef::run_batch(
      client,
      [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
        if (++pulled == 10) stop = true;
        return clef::Result<clef::DecisionRequest>(tickets(1)[0]);
      },
      [&](std::size_t, clef::Result<clef::Decision>&&) { ++delivered; }, options);
  EXPECT_TRUE(summary.stopped);
  EXPECT_EQ(delivered, summary.started);
  EXPECT_LE(summary.started, 10u + 2 * options.concurrency);

  // A source that throws: the exception reaches run_batch's caller once what is in flight is
  // back (the server has seen each item sent).
  options.should_stop = nullptr;
  const int seen_before = server.request_count();
  pulled = 0;
  EXPECT_THROW(clef::run_batch(
                   client,
                   [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
                     if (++pulled == 5) throw std::runtime_error("the input went away");
                     return clef::Result<clef::DecisionRequest>(tickets(1)[0]);
                   },
                   [&](std::size_t, clef::Result<clef::Decision>&&) {}, options),
               std::runtime_error);
  EXPECT_EQ(pulled, 5u);
  EXPECT_LE(server.request_count() - seen_before, 4);
}

TEST(Batch, ASinkThatThrowsLetsTheTransfersInFlightFinishFirst) {
  // The sink throws at the first result while nine more are at the server: run_batch passes the
  // exception on only once their callbacks have run, which write into the batch's own state
  // (ASan, which CI runs this under, sees any write after it is gone).
  FakeServer server;
  server.set_script([&server](const clef::MockRequest& request, int) -> std::optional<Scripted> {
    if (request.body.find("ticket 0\"") == std::string::npos)
      return Scripted{400, R"({"error":"bad request"})", "application/json", {}, 300ms};
    // The first answer only once all ten are at the server: a reader slower than the answer
    // would otherwise see the batch stop before it had handed them all over.
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (server.request_count() < 10 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
    return std::nullopt;
  });
  const auto requests = tickets(10);
  auto client = client_for(server);
  std::size_t next = 0;
  clef::BatchOptions options;
  options.concurrency = 10;
  EXPECT_THROW(clef::run_batch(
                   client,
                   [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
                     if (next == requests.size()) return std::nullopt;
                     return clef::Result<clef::DecisionRequest>(requests[next++]);
                   },
                   [&](std::size_t, clef::Result<clef::Decision>&&) {
                     throw std::runtime_error("the sink's disk is full");
                   },
                   options),
               std::runtime_error);
  EXPECT_EQ(server.request_count(), 10);
}
