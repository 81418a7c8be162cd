// The floor under any libcurl client, for bench/wrk_bench.py: the card's request posted N times
// with IN_FLIGHT transfers on one curl multi handle, easy handles and connections reused, the
// response thrown away — no JSON, no validation, no second thread. clef cannot go below this
// while libcurl does its HTTP; the benchmark prints it beside wrk and clef in the same run.
// Prints "N ok WALL_S CPU_S" (phase_clock.hpp: the transfers' time, not the set-up's); exits 0
// when every response was a 200.
//
//   libcurl_floor URL N IN_FLIGHT
#include <curl/curl.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "phase_clock.hpp"

namespace {

const char* const body =
    R"({"model":"clef-flash","state":{"ticket":"I was charged twice for order 1. Please refund )"
    R"(the extra payment."},"questions":{"team":{"type":"choice","instructions":"Which team )"
    R"(should handle this ticket?","criteria":{"billing":"Payments and refunds","technical":)"
    R"("Bugs and integrations","other":"None of the above"}}}})";

std::size_t discard(char*, std::size_t size, std::size_t count, void*) {
  return size * count;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: libcurl_floor URL N IN_FLIGHT\n";
    return 2;
  }
  const std::string url = argv[1];
  const long total = std::strtol(argv[2], nullptr, 10);
  const long in_flight = std::strtol(argv[3], nullptr, 10);
  curl_global_init(CURL_GLOBAL_DEFAULT);
  const bench::PhaseClock clock;
  CURLM* multi = curl_multi_init();
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  std::vector<CURL*> handles;
  long started = 0, finished = 0, ok = 0;
  for (long i = 0; i < in_flight && started < total; ++i, ++started) {
    CURL* handle = curl_easy_init();
    curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(handle, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);  // as clef: no SIGPIPE juggling per call
    curl_multi_add_handle(multi, handle);
    handles.push_back(handle);
  }
  while (finished < total) {
    int running = 0;
    curl_multi_perform(multi, &running);
    int queued = 0;
    while (CURLMsg* message = curl_multi_info_read(multi, &queued)) {
      if (message->msg != CURLMSG_DONE) continue;
      long status = 0;
      curl_easy_getinfo(message->easy_handle, CURLINFO_RESPONSE_CODE, &status);
      ok += message->data.result == CURLE_OK && status == 200;
      ++finished;
      curl_multi_remove_handle(multi, message->easy_handle);
      if (started < total) {
        curl_multi_add_handle(multi, message->easy_handle);  // same options, same connection
        ++started;
      }
    }
    if (finished < total) curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
  }
  for (CURL* handle : handles) curl_easy_cleanup(handle);
  curl_slist_free_all(headers);
  curl_multi_cleanup(multi);
  clock.report(static_cast<std::size_t>(ok));
  return ok == total ? 0 : 1;
}
