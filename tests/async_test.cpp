// The asynchronous path (Client::submit, decide_async, the curl loop and the pool adapter):
// every callback exactly once — on success, error, timeout, cancellation and shutdown — waits
// as timers rather than threads, and a loop that outlives a throwing callback.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <poll.h>

#include "clef/clef.hpp"
#include "fake_server.hpp"
#include "thread_count.hpp"
#include "ticket.hpp"
#include "wait_until.hpp"

namespace {

using clef::ErrorKind;
using clef::testing::FakeServer;
using clef::testing::Scripted;
using clef::testing::ticket;
using clef::testing::wait_until;
using namespace std::chrono_literals;

clef::Client client_for(const FakeServer& server, int attempts = 1) {
  clef::ClientOptions options;
  options.base_url = server.base_url();
  options.retry.max_attempts = attempts;
  return clef::Client::create(options).value();
}

/// Counts each request's callbacks and keeps its outcome.
struct Outcomes {
  std::mutex mutex;
  std::map<int, int> calls;
  std::map<int, clef::Result<clef::Decision>> results;
  std::atomic<int> total{0};
  std::function<void(clef::Result<clef::Decision>)> for_request(int n) {
    return [this, n](clef::Result<clef::Decision> result) {
      std::lock_guard<std::mutex> lock(mutex);
      ++calls[n];
      results.insert_or_assign(n, std::move(result));
      ++total;
    };
  }
  void expect_each_once(int n) {
    std::lock_guard<std::mutex> lock(mutex);
    ASSERT_EQ(calls.size(), static_cast<std::size_t>(n));
    for (const auto& [request, count] : calls) EXPECT_EQ(count, 1) << "request " << request;
  }
};

TEST(Async, EachSubmitCallsBackOnceWithWhatDecideGives) {
  FakeServer server;
  auto client = client_for(server);
  Outcomes outcomes;
  const auto caller = std::this_thread::get_id();
  std::atomic<bool> on_caller{false};
  for (int i = 0; i < 300; ++i) {
    client.submit(ticket(i), [&, done = outcomes.for_request(i)](auto result) mutable {
      if (std::this_thread::get_id() == caller) on_caller = true;
      done(std::move(result));
    });
  }
  ASSERT_TRUE(wait_until([&] { return outcomes.total == 300; }, "300 callbacks"));
  outcomes.expect_each_once(300);
  EXPECT_FALSE(on_caller) << "callbacks run on the loop thread";
  auto blocking = client.decide(ticket(7));
  ASSERT_TRUE(blocking);
  std::lock_guard<std::mutex> lock(outcomes.mutex);
  ASSERT_TRUE(outcomes.results.at(7)) << outcomes.results.at(7).error().to_string();
  EXPECT_EQ(outcomes.results.at(7)->raw_json, blocking->raw_json);
}

TEST(Async, DecideAsyncGivesAFuture) {
  FakeServer server;
  auto client = client_for(server);
  auto pending = client.decide_async(ticket(1));
  ASSERT_EQ(pending.wait_for(60s), std::future_status::ready);
  auto decision = pending.get();
  ASSERT_TRUE(decision) << decision.error().to_string();
  EXPECT_TRUE(decision->answers[0].ok());
  // A request refused before sending still comes back through the future.
  clef::DecisionRequest empty;
  auto refused = client.decide_async(empty).get();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::invalid_input);
}

TEST(Async, RetriesWaitAsTimersNotAsSleepingThreads) {
  // 200 requests each answered 503 with Retry-After: 1 first: a thread per waiting retry would
  // be 200 threads for a second; the loop holds them all as timers.
  // Declared before the server, whose destructor ends the threads that write into them.
  std::mutex mutex;
  std::map<std::string, int> seen;
  FakeServer server;
  server.set_script([&](const clef::MockRequest& request, int) -> std::optional<Scripted> {
    std::lock_guard<std::mutex> lock(mutex);
    if (seen[request.body]++ > 0) return std::nullopt;
    return Scripted{503, R"({"error":"busy"})", "application/json", {{"Retry-After", "1"}}};
  });
  auto client = client_for(server, 2);
  (void)client.decide_async(ticket(-1)).get();  // the loop thread exists before counting
  const int before = clef::testing::client_threads();
  Outcomes outcomes;
  for (int i = 0; i < 200; ++i) client.submit(ticket(i), outcomes.for_request(i));
  ASSERT_TRUE(wait_until([&] { return server.request_count() >= 201; }, "the first attempts"));
  const int waiting = clef::testing::client_threads();
  ASSERT_TRUE(wait_until([&] { return outcomes.total == 200; }, "200 callbacks"));
  outcomes.expect_each_once(200);
  for (auto& [n, result] : outcomes.results) EXPECT_TRUE(result) << n;
  // The client adds no thread per request (the mock's are not counted).
  EXPECT_LE(waiting - before, 2) << "threads while 200 retries waited";
}

TEST(Async, CancelOneRequestAmongMany) {
  FakeServer server;
  server.set_script([&](const clef::MockRequest& request, int) -> std::optional<Scripted> {
    if (request.body.find("ticket 5\"") == std::string::npos) return std::nullopt;
    return Scripted{200, "{}", "application/json", {}, 3000ms};
  });
  auto client = client_for(server);
  std::atomic<bool> cancel_five{false};
  Outcomes outcomes;
  for (int i = 0; i < 20; ++i)
    client.submit(ticket(i), outcomes.for_request(i), i == 5 ? &cancel_five : nullptr);
  ASSERT_TRUE(wait_until([&] { return outcomes.total == 19; }, "the other 19"));
  EXPECT_EQ(outcomes.calls.count(5), 0u) << "5 is still at the server";
  cancel_five = true;
  ASSERT_TRUE(wait_until([&] { return outcomes.total == 20; }, "the cancelled one"));
  outcomes.expect_each_once(20);
  std::lock_guard<std::mutex> lock(outcomes.mutex);
  ASSERT_FALSE(outcomes.results.at(5));
  EXPECT_EQ(outcomes.results.at(5).error().kind, ErrorKind::cancelled);
  for (auto& [n, result] : outcomes.results) {
    if (n != 5) {
      EXPECT_TRUE(result) << n;
    }
  }
}

TEST(Async, TimeoutsAndRefusedConnectionsCallBackOnce) {
  FakeServer server;
  server.set_script([](const clef::MockRequest&, int) {
    return Scripted{200, "{}", "application/json", {}, 2000ms};
  });
  clef::ClientOptions slow;
  slow.base_url = server.base_url();
  slow.request_timeout = 100ms;
  slow.retry.max_attempts = 1;
  auto timed_out = clef::Client::create(slow).value().decide_async(ticket(1)).get();
  ASSERT_FALSE(timed_out);
  EXPECT_EQ(timed_out.error().kind, ErrorKind::timeout);
  clef::ClientOptions down;
  down.base_url = "http://127.0.0.1:" + std::to_string(clef::testing::refusing_port());
  down.retry.max_attempts = 1;
  auto refused = clef::Client::create(down).value().decide_async(ticket(1)).get();
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, ErrorKind::connection_failed);
}

TEST(Async, RequestsInFlightWhenTheClientGoesStillCallBackOnce) {
  FakeServer server;
  server.set_latency(200ms);
  Outcomes outcomes;
  {
    auto client = client_for(server);
    for (int i = 0; i < 50; ++i) client.submit(ticket(i), outcomes.for_request(i));
  }  // the last Client copy is gone, the requests are not
  ASSERT_TRUE(wait_until([&] { return outcomes.total == 50; }, "50 callbacks"));
  outcomes.expect_each_once(50);
  for (auto& [n, result] : outcomes.results) EXPECT_TRUE(result) << n;
}

TEST(Async, ALoopThatShutsDownCompletesEverythingAsCancelled) {
  FakeServer server;
  server.set_script([](const clef::MockRequest&, int) {
    return Scripted{200, "{}", "application/json", {}, 3000ms};
  });
  std::atomic<int> cancelled{0}, other{0}, timers_shut{0};
  {
    auto loop = clef::make_curl_loop();
    for (int i = 0; i < 10; ++i) {
      clef::HttpRequest request;
      request.url = server.base_url() + "/v1/systemone";
      request.body = "{}";
      loop->start(request, [&](clef::Result<clef::HttpResponse> response) {
        ++(!response && response.error().kind == ErrorKind::cancelled ? cancelled : other);
      });
    }
    loop->after(1h, [&](bool shutting_down) { timers_shut += shutting_down ? 1 : 100; });
    wait_until([&] { return server.request_count() >= 10; }, "10 requests at the server");
  }  // destroyed with all ten in flight and the timer pending
  EXPECT_EQ(cancelled, 10);
  EXPECT_EQ(other, 0);
  EXPECT_EQ(timers_shut, 1);
}

TEST(Async, ACallbackThatThrowsDoesNotStopTheLoop) {
  FakeServer server;
  auto client = client_for(server);
  std::atomic<int> after_throw{0};
  client.submit(ticket(0), [](clef::Result<clef::Decision>) { throw std::runtime_error("bug"); });
  for (int i = 1; i <= 10; ++i) client.submit(ticket(i), [&](auto) { ++after_throw; });
  ASSERT_TRUE(wait_until([&] { return after_throw == 10; }, "the requests after the throw"));
  EXPECT_TRUE(client.decide_async(ticket(11)).get());
}

TEST(Async, AThousandInFlightFromOneThread) {
  FakeServer server;
  server.set_latency(300ms);
  auto client = client_for(server);
  Outcomes outcomes;
  for (int i = 0; i < 1000; ++i) client.submit(ticket(i), outcomes.for_request(i));
  ASSERT_TRUE(wait_until([&] { return outcomes.total == 1000; }, "1000 callbacks", 120s));
  outcomes.expect_each_once(1000);
  int ok = 0;
  for (auto& [n, result] : outcomes.results) ok += result.ok();
  EXPECT_EQ(ok, 1000);
}

TEST(Async, ABlockingTransportRunsOnThePool) {
  // A user's own Transport (here the cassette recorder around curl) serves submit() too.
  FakeServer server;
  const std::string cassette = ::testing::TempDir() + "async_pool.cassette.jsonl";
  std::remove(cassette.c_str());
  clef::ClientOptions options;
  options.base_url = server.base_url();
  options.transport =
      clef::make_recording_transport(clef::make_curl_transport(), cassette, "ollama").value();
  auto client = clef::Client::create(options).value();
  Outcomes outcomes;
  for (int i = 0; i < 20; ++i) client.submit(ticket(i), outcomes.for_request(i));
  ASSERT_TRUE(wait_until([&] { return outcomes.total == 20; }, "20 callbacks"));
  outcomes.expect_each_once(20);
  std::ifstream recorded(cassette);
  int lines = 0;
  for (std::string line; std::getline(recorded, line);) ++lines;
  EXPECT_EQ(lines, 20);
}

TEST(Async, ADrivenLoopRunsOnlyOnTheThreadThatDrivesIt) {
  // The application's own loop, here a poll() loop: requests submitted from another thread wake
  // its descriptor; every callback runs inside run_once(), on this thread; destroying the loop
  // here completes what is left as cancelled, here too.
  FakeServer server;
  server.set_latency(20ms);
  auto loop = clef::make_driven_curl_loop();
  clef::ClientOptions options;
  options.base_url = server.base_url();
  options.async_transport = loop;
  auto client = clef::Client::create(options).value();
  const auto driver = std::this_thread::get_id();
  std::atomic<int> done{0}, elsewhere{0};
  std::thread submitter([&] {
    for (int i = 0; i < 50; ++i) {
      client.submit(ticket(i), [&](clef::Result<clef::Decision> result) {
        if (std::this_thread::get_id() != driver) ++elsewhere;
        EXPECT_TRUE(result) << result.error().to_string();
        ++done;
      });
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (done < 50 && std::chrono::steady_clock::now() < deadline) {
    pollfd ready{loop->descriptor(), POLLIN, 0};
    ::poll(&ready, 1, static_cast<int>(loop->timeout().count()));
    loop->run_once();
  }
  submitter.join();
  EXPECT_EQ(done, 50);
  EXPECT_EQ(elsewhere, 0);
  // Nothing moves unless driven: a request started now stays in flight until stop().
  server.set_latency(0ms);
  std::atomic<int> cancelled{0};
  client.submit(ticket(99), [&](clef::Result<clef::Decision> result) {
    if (std::this_thread::get_id() == driver && !result &&
        result.error().kind == ErrorKind::cancelled)
      ++cancelled;
  });
  EXPECT_EQ(cancelled, 0);
  loop->stop();
  EXPECT_EQ(cancelled, 1);
  // Started after the stop: completed as cancelled at the next run_once().
  client.submit(ticket(100), [&](clef::Result<clef::Decision> result) {
    if (!result && result.error().kind == ErrorKind::cancelled) ++cancelled;
  });
  loop->run_once();
  EXPECT_EQ(cancelled, 2);
}

}  // namespace

TEST(Async, AClientWhoseLastOwnerGoesInsideAPoolHandlerEndsItsThreads) {
  // The client goes while its pool thread is still inside the answer's callback: the pool
  // thread then drops the last hold on the client and its pool. That must end the thread (it
  // used to destroy the pool's job under the pool's own lock and deadlock there, for ever).
  class OneReply final : public clef::Transport {
   public:
    clef::Result<clef::HttpResponse> send(const clef::HttpRequest&) override {
      clef::HttpResponse response;
      response.status = 200;
      response.body = R"({"model":"clef-flash","answers":{"urgent":{"type":"noul",)"
                      R"("probabilities":{"true":0.9,"false":0.1}}}})";
      return response;
    }
  };
  // Counted by name: the pool's threads alone, whatever else the process (or a sanitizer) runs.
  for (int round = 0; round < 20; ++round) {
    std::promise<void> client_gone;
    std::atomic<bool> answered{false};
    {
      clef::ClientOptions options;
      options.transport = std::make_shared<OneReply>();
      auto client = clef::Client::create(options).value();
      client.submit(ticket(round), [&, gone = client_gone.get_future().share()](
                                       clef::Result<clef::Decision> result) {
        EXPECT_TRUE(result) << result.error().to_string();
        answered = true;
        gone.wait();
      });
      ASSERT_TRUE(wait_until([&] { return answered.load(); }, "the answer"));
    }
    client_gone.set_value();
    ASSERT_TRUE(wait_until([&] { return clef::testing::threads_named("clef-pool") == 0; },
                           "the pool thread to end (round " + std::to_string(round) + ")", 10s));
  }
}

TEST(Async, DecideFromAClientsOwnCallbackIsRefusedNotAHang) {
  // decide() inside a submit() callback runs on the loop thread it would wait for: refused at
  // once with invalid_input, for the thread-owned loop and for a driven one; submit() still works
  // there.
  FakeServer server;
  clef::ClientOptions options;
  options.base_url = server.base_url();
  auto client = clef::Client::create(options).value();
  std::promise<clef::Result<clef::Decision>> inner;
  client.submit(ticket(1), [&](clef::Result<clef::Decision> outer) {
    EXPECT_TRUE(outer) << outer.error().to_string();
    inner.set_value(client.decide(ticket(2)));
  });
  auto refused = inner.get_future();
  ASSERT_EQ(refused.wait_for(30s), std::future_status::ready) << "decide() hung on the loop";
  const auto result = refused.get();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::invalid_input);
  EXPECT_NE(result.error().message.find("call submit() there"), std::string::npos);
  // From another thread the same client decides as usual.
  EXPECT_TRUE(client.decide(ticket(3)));

  auto loop = clef::make_driven_curl_loop();
  options.async_transport = loop;
  auto driven = clef::Client::create(options).value();
  std::optional<clef::Result<clef::Decision>> from_run_once;
  driven.submit(ticket(4),
                [&](clef::Result<clef::Decision>) { from_run_once = driven.decide(ticket(5)); });
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!from_run_once && std::chrono::steady_clock::now() < deadline) {
    pollfd ready{loop->descriptor(), POLLIN, 0};
    ::poll(&ready, 1, static_cast<int>(loop->timeout().count()));
    loop->run_once();
  }
  ASSERT_TRUE(from_run_once.has_value());
  ASSERT_FALSE(*from_run_once);
  EXPECT_EQ(from_run_once->error().kind, ErrorKind::invalid_input);
  loop->stop();
}

namespace {

/// One request through `loop`, waited for.
clef::Result<clef::HttpResponse> through(clef::AsyncTransport& loop, clef::HttpRequest request) {
  std::promise<clef::Result<clef::HttpResponse>> done;
  auto result = done.get_future();
  loop.start(std::move(request), [&](clef::Result<clef::HttpResponse> response) {
    done.set_value(std::move(response));
  });
  return result.get();
}

}  // namespace

TEST(CurlHandles, EachRequestGetsItsOwnOptionsOnAHandleAnotherLeft) {
  // A pooled easy handle keeps the options that stay from one request to the next; a request
  // that wants others (another server, header, method, proxy) must get them all, and none of the
  // last request's. One handle serves each transport here: they go one at a time.
  FakeServer first, second;
  const std::string dead_proxy =
      "http://127.0.0.1:" + std::to_string(clef::testing::refusing_port());
  const auto request = [&](const FakeServer& server, clef::Headers headers, std::string body,
                           std::string proxy) {
    clef::HttpRequest r;
    r.method = body.empty() ? "GET" : "POST";
    r.url = server.base_url() + "/v1/systemone";
    r.headers = std::move(headers);
    r.body = std::move(body);
    r.proxy = std::move(proxy);
    return r;
  };
  const std::vector<clef::HttpRequest> sequence = {
      request(first, {{"X-One", "1"}}, "{\"n\":1}", ""),
      request(first, {{"X-One", "1"}}, "{\"n\":2}", ""),
      request(second, {{"X-Two", "2"}}, "{\"n\":3}", ""),
      request(first, {}, "", ""),  // a GET: the mock has no such page
      request(first, {{"X-One", "1"}}, "{\"n\":4}", dead_proxy),
      request(first, {{"X-One", "1"}}, "{\"n\":5}", ""),
  };
  auto loop = clef::make_curl_loop();
  auto blocking = clef::make_curl_transport();
  for (int transport = 0; transport < 2; ++transport) {
    const std::size_t first_before = first.requests().size();
    const std::size_t second_before = second.requests().size();
    std::vector<int> statuses;
    for (const auto& r : sequence) {
      auto response = transport == 0 ? through(*loop, r) : blocking->send(r);
      if (!r.proxy->empty()) {
        ASSERT_FALSE(response.ok()) << "a refusing proxy was not used";
        EXPECT_NE(response.error().to_string().find("proxy"), std::string::npos)
            << response.error().to_string();
        statuses.push_back(0);
      } else {
        ASSERT_TRUE(response.ok()) << response.error().to_string();
        statuses.push_back(response->status);
      }
    }
    // A body without a model or questions: the mock's 404 (no such model), but every POST is
    // kept in its log; the GET is not one of them.
    EXPECT_EQ(statuses, (std::vector<int>{404, 404, 404, 404, 0, 404}));
    const auto at_first = first.requests();
    const auto at_second = second.requests();
    ASSERT_EQ(at_first.size() - first_before, 3u);
    ASSERT_EQ(at_second.size() - second_before, 1u);
    const auto& two = at_second[second_before];
    EXPECT_EQ(two.body, "{\"n\":3}");
    EXPECT_EQ(two.header("X-Two"), "2");
    EXPECT_EQ(two.header("X-One"), "") << "the last request's header stayed";
    const auto& five = at_first[first_before + 2];
    EXPECT_EQ(five.method, "POST");
    EXPECT_EQ(five.body, "{\"n\":5}");
    EXPECT_EQ(five.header("X-One"), "1");
    EXPECT_EQ(five.header("X-Two"), "");
  }
}
