// The blocking libcurl transport: one easy handle per concurrent caller, each kept (with its
// connection) for the next call.
#include <mutex>
#include <vector>

#include "curl/curl_transfer.hpp"

namespace clef {
namespace {

class CurlTransport final : public Transport {
 public:
  CurlTransport() { detail::curl_global_once(); }
  ~CurlTransport() override {
    for (CURL* handle : m_idle) curl_easy_cleanup(handle);
  }

  Result<HttpResponse> send(const HttpRequest& request) override {
    CURL* handle = acquire();
    if (!handle) return make_error(ErrorKind::connection_failed, "cannot create a curl handle");
    detail::CurlTransfer transfer;
    transfer.prepare(handle, request, detail::CurlTransfer::CancelledBy::curl);
    auto result = transfer.finish(handle, curl_easy_perform(handle));
    release(handle);
    return result;
  }

 private:
  CURL* acquire() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (!m_idle.empty()) {
        CURL* handle = m_idle.back();
        m_idle.pop_back();
        return handle;
      }
    }
    return curl_easy_init();
  }

  void release(CURL* handle) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_idle.push_back(handle);
  }

  std::mutex m_mutex;
  std::vector<CURL*> m_idle;
};

}  // namespace

std::shared_ptr<Transport> make_curl_transport() {
  return std::make_shared<CurlTransport>();
}

}  // namespace clef
