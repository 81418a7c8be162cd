// The requests the mock received: MockRequest, the bounded list behind requests(), the --log
// file.
#include "mock/request_log.hpp"

#include <strings.h>

#include <iostream>

#include "util/ascii.hpp"
#include "util/json_text.hpp"

namespace clef {

std::string MockRequest::header(const std::string& name) const {
  for (const auto& [key, value] : headers) {
    if (strcasecmp(key.c_str(), name.c_str()) == 0) return value;
  }
  return {};
}

}  // namespace clef

namespace clef::mock_detail {

void RequestLog::record(const MockRequest& request, const std::string& body,
                        const Decoded& decoded) {
  std::lock_guard<std::mutex> lock(m_mutex);
  write_line(request, body, decoded);
  if (m_limit == 0) return;
  m_recorded.push_back(request);
  if (!decoded.too_large) m_recorded.back().body = body;
  m_recorded_bytes += m_recorded.back().body.size();
  while (m_recorded.size() > m_limit ||
         (m_recorded.size() > 1 && m_recorded_bytes > max_kept_body_bytes)) {
    m_recorded_bytes -= m_recorded.front().body.size();
    m_recorded.pop_front();
  }
}

std::vector<MockRequest> RequestLog::requests() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return {m_recorded.begin(), m_recorded.end()};
}

void RequestLog::set_limit(std::size_t requests) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_limit = requests;
  while (m_recorded.size() > requests) {
    m_recorded_bytes -= m_recorded.front().body.size();
    m_recorded.pop_front();
  }
}

bool RequestLog::open_file(const std::string& path) {
  auto file = std::make_unique<std::ofstream>(path, std::ios::app);
  if (!*file) return false;
  std::lock_guard<std::mutex> lock(m_mutex);
  m_file = std::move(file);
  return true;
}

void RequestLog::write_line(const MockRequest& request, const std::string& body,
                            const Decoded& decoded) {
  if (!m_file) return;
  Json headers = Json::object();
  for (const auto& [name, value] : request.headers) {
    const std::string lower = detail::ascii_lower(name);
    // No credential in the log: the provider's, the proxy's or AI Gateway's.
    if (lower.find("authorization") == std::string::npos) headers[lower] = value;
  }
  Json line = {{"method", request.method}, {"path", request.path}};
  if (decoded.too_large) {
    line["body"] = nullptr;
    line["body_bytes"] = body.size();
  } else {
    line["body"] = decoded.body ? *decoded.body : Json(body);
  }
  line["headers"] = headers;
  *m_file << clef::dump_json(line) << "\n" << std::flush;
  if (!*m_file && !m_write_failed) {
    // A test that asserts from the log what was sent must not read a silent gap.
    m_write_failed = true;
    std::cerr << "clef mock: warning: cannot write to the request log (a full disk?): the "
                 "requests from here on are not in it\n";
  }
}

}  // namespace clef::mock_detail
