// run_batch over several hosts: each item lands once, on a host that can take it; hosts that
// refuse, fail or are gone are worked around, and each result says which host answered.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "clef/clef.hpp"
#include "fake_server.hpp"

namespace {

using clef::testing::FakeServer;
using clef::testing::Scripted;
using namespace std::chrono_literals;

std::vector<clef::DecisionRequest> tickets(int n) {
  std::vector<clef::DecisionRequest> requests;
  for (int i = 0; i < n; ++i) {
    clef::DecisionRequest r;
    r.state = clef::State::text("ticket " + std::to_string(i));
    r.questions = {clef::Question::yes_no("urgent", "Is it urgent?")};
    requests.push_back(std::move(r));
  }
  return requests;
}

clef::Client client_at(const std::string& base_url) {
  clef::ClientOptions options;
  options.base_url = base_url;
  options.retry.initial_backoff = 1ms;
  options.retry.max_backoff = 2ms;
  options.connect_timeout = 2000ms;
  return clef::Client::create(options).value();
}

/// Every result of a run over `hosts`, by index, and the summary.
struct Outcome {
  std::map<std::size_t, clef::Result<clef::Decision>> results;
  std::size_t delivered = 0;
  clef::BatchSummary summary;
};

Outcome run_over(const std::vector<clef::Client>& hosts,
                 const std::vector<clef::DecisionRequest>& requests, clef::BatchOptions options) {
  Outcome run;
  std::size_t next = 0;
  run.summary = clef::run_batch(
      hosts,
      [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
        if (next == requests.size()) return std::nullopt;
        return clef::Result<clef::DecisionRequest>(requests[next++]);
      },
      [&](std::size_t index, clef::Result<clef::Decision>&& result) {
        ++run.delivered;
        run.results.emplace(index, std::move(result));
      },
      options);
  return run;
}

TEST(BatchHosts, ItemsSpreadOverHealthyHostsAndSayWhichAnswered) {
  FakeServer a, b, c;
  for (FakeServer* server : {&a, &b, &c}) server->set_latency(5ms);
  const auto requests = tickets(90);
  clef::BatchOptions options;
  options.concurrency = 9;
  const Outcome run =
      run_over({client_at(a.base_url()), client_at(b.base_url()), client_at(c.base_url())},
               requests, options);
  ASSERT_EQ(run.delivered, 90u);
  std::map<std::string, int> answered_by;
  for (const auto& [index, result] : run.results) {
    ASSERT_TRUE(result.ok()) << result.error().to_string();
    ++answered_by[result->host];
  }
  EXPECT_EQ(a.request_count() + b.request_count() + c.request_count(), 90);
  ASSERT_EQ(answered_by.size(), 3u);
  for (FakeServer* server : {&a, &b, &c}) {
    EXPECT_EQ(answered_by[server->base_url()], server->request_count());
    // Least outstanding over equal hosts: each takes a fair share, not all of it.
    EXPECT_GT(server->request_count(), 15) << server->base_url();
  }
  ASSERT_EQ(run.summary.hosts.size(), 3u);
  EXPECT_EQ(run.summary.hosts[1].host, b.base_url());
  EXPECT_EQ(run.summary.hosts[1].answered, static_cast<std::size_t>(b.request_count()));
}

TEST(BatchHosts, AGoneHostIsSetAsideAndItsItemsGoElsewhereWithoutSpendingRetries) {
  FakeServer alive;
  const std::string gone = "http://127.0.0.1:" + std::to_string(clef::testing::refusing_port());
  clef::Client refusing = client_at(gone);
  const auto requests = tickets(60);
  clef::BatchOptions options;
  options.concurrency = 4;
  // One attempt per item: a refused connection moving the item must not count as one.
  clef::ClientOptions one_try = client_at(alive.base_url()).options();
  one_try.retry.max_attempts = 1;
  const Outcome run =
      run_over({refusing, clef::Client::create(one_try).value()}, requests, options);
  ASSERT_EQ(run.delivered, 60u);
  for (const auto& [index, result] : run.results) {
    ASSERT_TRUE(result.ok()) << index << ": " << result.error().to_string();
    EXPECT_EQ(result->host, alive.base_url());
  }
  EXPECT_EQ(alive.request_count(), 60);
  const clef::HostSummary& dead = run.summary.hosts[0];
  EXPECT_EQ(dead.answered, 0u);
  EXPECT_GE(dead.ejections, 1u) << "three refused connections in a row set it aside";
  EXPECT_GE(dead.moved, 3u);
  // Set aside, it is probed once a second at most, not sent a share of 60 items.
  EXPECT_LT(dead.moved, 10u);
}

TEST(BatchHosts, RefusalsMoveTheItemAndEachHostLearnsItsOwnLimit) {
  FakeServer full, roomy;
  full.set_latency(10ms);
  roomy.set_latency(10ms);
  clef::MockFaults faults;
  faults.capacity = 1;  // a second request at once is answered 503
  full.set_faults(faults);
  const auto requests = tickets(80);
  clef::BatchOptions options;
  options.concurrency = 8;
  const Outcome run =
      run_over({client_at(full.base_url()), client_at(roomy.base_url())}, requests, options);
  ASSERT_EQ(run.delivered, 80u);
  for (const auto& [index, result] : run.results) ASSERT_TRUE(result.ok()) << index;
  EXPECT_GT(run.summary.hosts[0].refused, 0u);
  EXPECT_EQ(run.summary.hosts[1].refused, 0u);
  EXPECT_EQ(run.summary.hosts[0].answered + run.summary.hosts[1].answered, 80u);
  EXPECT_EQ(full.request_count() + roomy.request_count(),
            static_cast<int>(80 + run.summary.throttled));
  // The full host was cut to what it takes; the roomy one took the rest.
  EXPECT_GT(run.summary.hosts[1].answered, run.summary.hosts[0].answered);
}

TEST(BatchHosts, AHostThatAnswersGarbageIsSetAsideAndItsItemsAnsweredElsewhere) {
  FakeServer good, hostile;
  // The good host takes a moment, as a model does: the run lasts long enough for the hostile
  // host to be tried three times (at 0 ms a loaded machine could finish on the good host first).
  good.set_latency(2ms);
  hostile.set_script([](const clef::MockRequest&, int) -> std::optional<Scripted> {
    return Scripted{200, R"({"answers": {"urgent": {"probabilities": {"yes": 2e308)",
                    "application/json"};
  });
  const auto requests = tickets(40);
  clef::BatchOptions options;
  options.concurrency = 4;
  const Outcome run =
      run_over({client_at(good.base_url()), client_at(hostile.base_url())}, requests, options);
  ASSERT_EQ(run.delivered, 40u) << "every item delivered once";
  for (const auto& [index, result] : run.results) {
    ASSERT_TRUE(result.ok()) << index << ": " << result.error().to_string();
    EXPECT_EQ(result->host, good.base_url());
  }
  // Invalid JSON from one host is that host's fault: the item goes to another, and three in a
  // row set the host aside, so it sees a few requests, not half of them.
  EXPECT_EQ(good.request_count(), 40);
  EXPECT_GE(run.summary.hosts[1].ejections, 1u);
  EXPECT_LT(hostile.request_count(), 12);
  EXPECT_EQ(run.summary.hosts[1].moved, static_cast<std::size_t>(hostile.request_count()));
}

TEST(BatchHosts, WhenEveryHostGoesTheRestFailsAndTheRunEnds) {
  auto a = std::make_unique<FakeServer>();
  auto b = std::make_unique<FakeServer>();
  a->set_latency(2ms);
  b->set_latency(2ms);
  const std::vector<clef::Client> hosts{client_at(a->base_url()), client_at(b->base_url())};
  const auto requests = tickets(300);
  std::size_t next = 0, ok = 0, failed = 0;
  clef::BatchOptions options;
  options.concurrency = 4;
  options.max_ejected_share = 1.0;  // both may be set aside: this is what happens then
  const clef::BatchSummary summary = clef::run_batch(
      hosts,
      [&]() -> std::optional<clef::Result<clef::DecisionRequest>> {
        if (next == requests.size()) return std::nullopt;
        return clef::Result<clef::DecisionRequest>(requests[next++]);
      },
      [&](std::size_t, clef::Result<clef::Decision>&& result) {
        result ? ++ok : ++failed;
        if (ok == 20) a.reset(), b.reset();  // both servers stop: connections are refused
      },
      options);
  // Set aside, both hosts would only be probed now and then and the items would wait for
  // ever; with every host set aside none is, and each item fails as against one dead server.
  EXPECT_EQ(ok + failed, 300u);
  EXPECT_GE(ok, 20u);
  EXPECT_GT(failed, 250u);
  EXPECT_GE(summary.hosts[0].ejections + summary.hosts[1].ejections, 2u);
}

// A fleet of 10 where 5 always answer 500: at most the cap is set aside at once (Envoy's 10% by
// default, at least one); the failing hosts past it stay in rotation; every item is delivered
// once whatever the cap.
TEST(BatchHosts, AtMostTheCapOfAFleetIsSetAsideAtOnce) {
  std::vector<std::unique_ptr<FakeServer>> servers;
  std::vector<clef::Client> hosts;
  for (int i = 0; i < 10; ++i) {
    servers.push_back(std::make_unique<FakeServer>());
    if (i % 2 == 1) {
      servers.back()->set_script(
          [](const clef::MockRequest&, int) -> std::optional<clef::MockReply> {
            return clef::MockReply{500, R"({"error": "broken"})", "application/json", {}, {}, {}};
          });
    }
    hosts.push_back(client_at(servers.back()->base_url()));
  }
  const auto requests = tickets(400);
  for (const double share : {0.1, 0.5, 1.0}) {
    clef::BatchOptions options;
    options.concurrency = 10;
    options.max_ejected_share = share;
    const Outcome run = run_over(hosts, requests, options);
    EXPECT_EQ(run.delivered, 400u) << share;
    EXPECT_EQ(run.results.size(), 400u) << share;  // each index once
    std::size_t ejections = 0;
    for (const auto& host : run.summary.hosts) ejections += host.ejections;
    EXPECT_GE(ejections, 1u) << share;
    EXPECT_GE(run.summary.most_ejected_at_once, 1u) << share;
    EXPECT_LE(run.summary.most_ejected_at_once, share == 0.1 ? 1u : 5u) << share;
    // With no cap, failing hosts go aside together (each fails 3 in a row within its first
    // second): what the cap prevents.
    if (share == 1.0) {
      EXPECT_GE(run.summary.most_ejected_at_once, 2u);
    }
    // Only the failing hosts are ever set aside.
    for (std::size_t i = 0; i < hosts.size(); i += 2)
      EXPECT_EQ(run.summary.hosts[i].ejections, 0u) << share << " host " << i;
  }
}

// Five of ten hosts gone (connections refused at once), the default cap (one set aside): the four
// kept in rotation past it are a last resort probed once a second, so they cannot draw the items
// away from the healthy five — which answer every one. (Kept with their full share, each took
// an item the moment it refused the last, and most items failed in a fraction of a second.)
TEST(BatchHosts, HostsPastTheCapAreALastResortNotABlackHole) {
  std::vector<std::unique_ptr<FakeServer>> servers;
  std::vector<clef::Client> hosts;
  for (int i = 0; i < 10; ++i) {
    servers.push_back(std::make_unique<FakeServer>());
    servers.back()->set_latency(5ms);
    hosts.push_back(client_at(servers.back()->base_url()));
  }
  for (int i = 1; i < 10; i += 2) servers[static_cast<std::size_t>(i)].reset();
  const auto requests = tickets(300);
  clef::BatchOptions options;
  options.concurrency = 10;
  const Outcome run = run_over(hosts, requests, options);
  std::size_t ok = 0;
  for (const auto& [index, result] : run.results) ok += result.ok();
  EXPECT_EQ(run.delivered, 300u);
  EXPECT_EQ(ok, 300u);
  EXPECT_LE(run.summary.most_ejected_at_once, 1u);
  std::size_t healthy = 0;
  for (std::size_t i = 0; i < hosts.size(); i += 2) healthy += run.summary.hosts[i].answered;
  EXPECT_EQ(healthy, 300u);
}

TEST(BatchHosts, AffinityFollowsTheHostNotItsPlaceInTheList) {
  FakeServer a, b, c;
  const auto requests = tickets(40);
  clef::BatchOptions options;
  options.concurrency = 1;
  options.state_affinity = true;
  const clef::Client ca = client_at(a.base_url()), cb = client_at(b.base_url()),
                     cc = client_at(c.base_url());
  const Outcome abc = run_over({ca, cb, cc}, requests, options);
  const Outcome cab = run_over({cc, ca, cb}, requests, options);
  const Outcome without_a = run_over({cb, cc}, requests, options);
  std::size_t moved = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const std::string& own = abc.results.at(i)->host;
    EXPECT_EQ(cab.results.at(i)->host, own) << i;
    // When a leaves, only a's states move.
    if (own != a.base_url()) {
      EXPECT_EQ(without_a.results.at(i)->host, own) << i;
    }
    moved += own == a.base_url();
  }
  EXPECT_GT(moved, 3u) << "a had states of its own";
}

TEST(BatchHosts, ASlowAndATruncatingHostCostAttemptsButLoseNothing) {
  FakeServer good, slow, truncating;
  slow.set_script([](const clef::MockRequest&, int) -> std::optional<Scripted> {
    Scripted stalled{200, R"({"answers": {}})", "application/json"};
    stalled.delay = 2000ms;  // past the client's timeout: a timeout, retryable
    return stalled;
  });
  truncating.set_script([](const clef::MockRequest&, int) -> std::optional<Scripted> {
    Scripted cut{200, std::string(400, ' ') + "{}", "application/json"};
    cut.truncate_at = 100;
    return cut;
  });
  std::vector<clef::Client> hosts;
  for (FakeServer* server : {&slow, &truncating, &good}) {
    clef::ClientOptions options = client_at(server->base_url()).options();
    // Short for the slow host only: a loaded machine must not time out the good one's answers.
    options.request_timeout = server == &slow ? 300ms : 30000ms;
    options.retry.max_attempts = 3;
    hosts.push_back(clef::Client::create(options).value());
  }
  const auto requests = tickets(30);
  clef::BatchOptions options;
  options.concurrency = 6;
  const Outcome run = run_over(hosts, requests, options);
  ASSERT_EQ(run.delivered, 30u);
  std::size_t ok = 0;
  for (const auto& [index, result] : run.results) {
    if (!result) {
      // Three attempts, each on a host that failed it: an honest error naming the last.
      EXPECT_NE(result.error().host, good.base_url()) << result.error().to_string();
      continue;
    }
    ++ok;
    EXPECT_EQ(result->host, good.base_url());
  }
  EXPECT_EQ(ok, static_cast<std::size_t>(good.request_count()));
  EXPECT_GE(ok, 24u) << "the failing hosts were set aside, the good one took the rest";
  EXPECT_GE(run.summary.hosts[0].ejections + run.summary.hosts[1].ejections, 1u);
  EXPECT_EQ(run.summary.hosts[0].answered + run.summary.hosts[1].answered, 0u);
}

TEST(BatchHosts, StateAffinitySendsEachStateToItsOwnHostEveryRun) {
  FakeServer a, b, c;
  const auto requests = tickets(60);
  clef::BatchOptions options;
  options.concurrency = 1;  // one at a time: the own host always has room
  options.state_affinity = true;
  const std::vector<clef::Client> hosts{client_at(a.base_url()), client_at(b.base_url()),
                                        client_at(c.base_url())};
  const Outcome first = run_over(hosts, requests, options);
  const Outcome second = run_over(hosts, requests, options);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    ASSERT_TRUE(first.results.at(i).ok());
    EXPECT_EQ(first.results.at(i)->host, second.results.at(i)->host) << i;
  }
  for (const auto& summary : first.summary.hosts) EXPECT_GT(summary.answered, 5u) << summary.host;
  // Without affinity, one at a time, the hosts take turns: the assignment differs.
  options.state_affinity = false;
  const Outcome unpinned = run_over(hosts, requests, options);
  std::size_t same = 0;
  for (std::size_t i = 0; i < requests.size(); ++i)
    same += unpinned.results.at(i)->host == first.results.at(i)->host;
  EXPECT_LT(same, requests.size());
}

}  // namespace
