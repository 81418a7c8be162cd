// The blocking libcurl transport: one easy handle per concurrent caller, each kept (with its
// connection) for the next call.
#include <memory>
#include <mutex>
#include <vector>

#include "curl/curl_transfer.hpp"

namespace clef {
namespace {

class CurlTransport final : public Transport {
 public:
  CurlTransport() { detail::curl_global_once(); }
  Result<HttpResponse> send(const HttpRequest& request) override {
    std::unique_ptr<detail::CurlHandle> handle = acquire();
    if (!handle->get()) {
      return make_error(ErrorKind::connection_failed, "cannot create a curl handle");
    }
    detail::CurlTransfer transfer;
    transfer.prepare(*handle, request, detail::CurlTransfer::CancelledBy::curl);
    auto result = transfer.finish(handle->get(), curl_easy_perform(handle->get()));
    release(std::move(handle));
    return result;
  }

 private:
  std::unique_ptr<detail::CurlHandle> acquire() {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (!m_idle.empty()) {
        std::unique_ptr<detail::CurlHandle> handle = std::move(m_idle.back());
        m_idle.pop_back();
        return handle;
      }
    }
    return std::make_unique<detail::CurlHandle>();
  }

  void release(std::unique_ptr<detail::CurlHandle> handle) {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_idle.push_back(std::move(handle));
  }

  std::mutex m_mutex;
  std::vector<std::unique_ptr<detail::CurlHandle>> m_idle;
};

}  // namespace

std::shared_ptr<Transport> make_curl_transport() {
  return std::make_shared<CurlTransport>();
}

}  // namespace clef
