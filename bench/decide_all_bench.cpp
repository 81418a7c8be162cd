// The library alone, for bench/wrk_bench.py: N decisions with a number in flight, no file I/O.
// Prints "N ok WALL_S CPU_S" so the script can check nothing failed: the time of the decisions
// alone (phase_clock.hpp), not of building the requests before them, which is the application's.
//
//   decide_all_bench URL N IN_FLIGHT [decide_all|driven|submit]
//
// decide_all: the batch engine (the calling thread feeds the loop and collects the results).
// driven: the same on a loop with no thread (make_driven_curl_loop), which decide_all turns on
// the calling thread (BatchOptions::drive_loop): one thread in all.
// submit: IN_FLIGHT chains of Client::submit, each callback starting the next decision on the
// loop thread, so no other thread takes part: what the asynchronous API costs by itself.
#include <clef/clef.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>

#include "phase_clock.hpp"

namespace {

std::vector<clef::DecisionRequest> tickets(std::size_t n) {
  std::vector<clef::DecisionRequest> requests(n);
  for (std::size_t i = 0; i < n; ++i) {
    requests[i].state =
        clef::State::json(R"({"ticket": "I was charged twice for order )" + std::to_string(i) +
                          R"(. Please refund the extra payment."})")
            .value();
    requests[i].questions.push_back(clef::Question::choice("team",
                                                           "Which team should handle this ticket?",
                                                           {{"billing", "Payments and refunds"},
                                                            {"technical", "Bugs and integrations"},
                                                            {"other", "None of the above"}}));
  }
  return requests;
}

/// Keeps `in_flight` decisions going with submit alone until every request has an answer.
std::size_t run_submit_chains(const clef::Client& client, std::vector<clef::DecisionRequest>& all,
                              std::size_t in_flight) {
  std::atomic<std::size_t> next{0};
  std::size_t finished = 0;
  std::size_t ok = 0;
  std::mutex mutex;
  std::condition_variable all_done;
  std::function<void()> start_next = [&] {
    const std::size_t index = next.fetch_add(1);
    if (index >= all.size()) return;
    client.submit(std::move(all[index]), [&](clef::Result<clef::Decision> result) {
      // The next one first: once the last is counted, this function's locals may be gone.
      start_next();
      std::lock_guard<std::mutex> lock(mutex);
      ok += result.ok();
      if (++finished == all.size()) all_done.notify_one();
    });
  };
  for (std::size_t i = 0; i < in_flight; ++i) start_next();
  std::unique_lock<std::mutex> lock(mutex);
  all_done.wait(lock, [&] { return finished == all.size(); });
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 5 ? argv[4] : "decide_all";
  if ((argc != 4 && argc != 5) || (mode != "decide_all" && mode != "driven" && mode != "submit")) {
    std::cerr << "usage: decide_all_bench URL N IN_FLIGHT [decide_all|driven|submit]\n";
    return 2;
  }
  clef::ClientOptions options;
  options.backend = clef::Backend::ollama;
  options.base_url = argv[1];
  std::shared_ptr<clef::DrivenCurlLoop> driven;
  if (mode == "driven") options.async_transport = driven = clef::make_driven_curl_loop();
  auto client = clef::Client::create(options);
  if (!client) {
    std::cerr << client.error().to_string() << "\n";
    return 2;
  }
  const std::size_t n = std::strtoul(argv[2], nullptr, 10);
  const std::size_t in_flight = std::strtoul(argv[3], nullptr, 10);
  auto requests = tickets(n);
  const bench::PhaseClock clock;
  std::size_t ok = 0;
  if (mode == "submit") {
    ok = run_submit_chains(client.value(), requests, in_flight);
  } else {
    clef::BatchOptions batch;
    batch.concurrency = in_flight;
    batch.drive_loop = driven;
    for (const auto& result : clef::decide_all(client.value(), requests, batch)) ok += result.ok();
  }
  clock.report(ok);
  return ok == n ? 0 : 1;
}
