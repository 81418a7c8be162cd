// Internal: the decision requests the mock received — the bounded list requests() returns and
// the --log file of JSON lines (without Authorization).
#pragma once

#include <cstddef>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "clef/mock.hpp"
#include "mock/request_body.hpp"

namespace clef::mock_detail {

class RequestLog {
 public:
  /// requests() holds bodies up to this many bytes in all; the oldest requests go first.
  static constexpr std::size_t max_kept_body_bytes = 256u * 1024u * 1024u;

  /// `request` (without its body) and `body` into the log file and the list; a body refused as
  /// too large is kept in neither.
  void record(const MockRequest& request, const std::string& body, const Decoded& decoded);
  std::vector<MockRequest> requests() const;
  /// How many requests the list keeps (0: none); older ones go first.
  void set_limit(std::size_t requests);
  /// Appends each request to the file at `path` from now on; false when it cannot be opened.
  bool open_file(const std::string& path);

 private:
  void write_line(const MockRequest& request, const std::string& body, const Decoded& decoded);

  mutable std::mutex m_mutex;
  std::deque<MockRequest> m_recorded;
  std::size_t m_recorded_bytes = 0;
  std::size_t m_limit = 1000;
  std::unique_ptr<std::ofstream> m_file;
  bool m_write_failed = false;  ///< Said once on stderr.
};

}  // namespace clef::mock_detail
