// The library alone, for bench/wrk_bench.py: N decisions through decide_all with a number in
// flight, no file I/O. Prints "N ok" so the script can check nothing failed.
//
//   decide_all_bench URL N IN_FLIGHT [LOOP_THREADS]
#include <clef/clef.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: decide_all_bench URL N IN_FLIGHT [LOOP_THREADS]\n";
    return 2;
  }
  clef::ClientOptions options;
  options.backend = clef::Backend::ollama;
  options.base_url = argv[1];
  if (argc == 5) options.async_transport = clef::make_curl_loop(std::strtoul(argv[4], nullptr, 10));
  auto client = clef::Client::create(options);
  if (!client) {
    std::cerr << client.error().to_string() << "\n";
    return 2;
  }
  const std::size_t n = std::strtoul(argv[2], nullptr, 10);
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
  clef::BatchOptions batch;
  batch.concurrency = std::strtoul(argv[3], nullptr, 10);
  std::size_t ok = 0;
  for (const auto& result : clef::decide_all(client.value(), requests, batch)) ok += result.ok();
  std::cout << ok << " ok\n";
  return ok == n ? 0 : 1;
}
