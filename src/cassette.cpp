#include "clef/cassette.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <unordered_map>

#include "clef/digest.hpp"
#include "json_text.hpp"
#include "write_all.hpp"

namespace clef {
namespace {

/// Response headers a replay must give back: what the client reads from a response.
bool header_matters(const std::string& name) {
  return name == "content-type" || name == "retry-after" || name == "retry-after-ms" ||
         name == "x-typesafe-request-id" || name == "cf-ai-req-id" || name == "cf-ray" ||
         name == "x-request-id";
}

std::string path_of(const std::string& url) {
  const auto scheme = url.find("://");
  const auto slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  return slash == std::string::npos ? "/" : url.substr(slash);
}

std::string dump(const detail::Json& value) {
  return value.dump(-1, ' ', false, detail::Json::error_handler_t::replace);
}

/// "questions team, refund; state "I was charged twice…"" for a miss.
std::string describe(const std::string& body) {
  auto parsed = detail::parse_json(body, ErrorKind::invalid_input, "the request");
  if (!parsed || !parsed->is_object()) return "a request that is not a decision";
  std::string questions;
  const auto q = parsed->find("questions");
  if (q != parsed->end() && q->is_object()) {
    for (const auto& item : q->items()) questions += (questions.empty() ? "" : ", ") + item.key();
  }
  std::string state;
  const auto s = parsed->find("state");
  if (s != parsed->end()) state = s->is_string() ? s->get<std::string>() : dump(*s);
  if (state.size() > 60) state = state.substr(0, 60) + "…";
  return "questions " + (questions.empty() ? std::string("(none)") : questions) + "; state \"" +
         state + "\"";
}

class RecordingTransport final : public Transport {
 public:
  RecordingTransport(std::shared_ptr<Transport> inner, int fd, std::string path, std::string tag)
      : m_inner(std::move(inner)), m_fd(fd), m_path(std::move(path)), m_tag(std::move(tag)) {}
  ~RecordingTransport() override { ::close(m_fd); }

  Result<HttpResponse> send(const HttpRequest& request) override {
    auto response = m_inner->send(request);
    if (!response) return response;
    detail::Json line = detail::Json::object();
    line["key"] = exchange_key(m_tag, request);
    line["backend"] = m_tag;
    line["method"] = request.method;
    line["path"] = path_of(request.url);
    line["request"] = request.body;
    line["status"] = response->status;
    detail::Json headers = detail::Json::array();
    for (const auto& [name, value] : response->headers) {
      if (header_matters(name)) headers.push_back({name, value});
    }
    line["headers"] = headers;
    line["body"] = response->body;
    const std::string text = dump(line) + "\n";
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!detail::write_all(m_fd, text)) {
      return make_error(ErrorKind::invalid_input,
                        std::string("cannot append to the cassette: ") + std::strerror(errno),
                        m_path);
    }
    return response;
  }

 private:
  std::shared_ptr<Transport> m_inner;
  int m_fd;
  std::string m_path;
  std::string m_tag;
  std::mutex m_mutex;
};

class ReplayTransport final : public Transport {
 public:
  ReplayTransport(std::unordered_map<std::string, HttpResponse> recorded, std::string path,
                  std::string tag)
      : m_recorded(std::move(recorded)), m_path(std::move(path)), m_tag(std::move(tag)) {}

  Result<HttpResponse> send(const HttpRequest& request) override {
    const auto it = m_recorded.find(exchange_key(m_tag, request));
    if (it != m_recorded.end()) return it->second;
    return make_error(ErrorKind::not_recorded,
                      "the cassette has no recording of this request (" + describe(request.body) +
                          "): record it with --record against a server, or fix the request",
                      m_path);
  }

 private:
  std::unordered_map<std::string, HttpResponse> m_recorded;
  std::string m_path;
  std::string m_tag;
};

/// The longest cassette line read: a recorded body is at most the 16 MiB response cap, and JSON
/// escaping can grow it a few times.
constexpr std::size_t max_cassette_line = 128u * 1024u * 1024u;

/// One line into `line`; false at the end, or (with `too_long`) past max_cassette_line.
bool next_line(std::istream& in, std::string& line, bool& too_long) {
  line.clear();
  too_long = false;
  std::streambuf* buffer = in.rdbuf();
  bool any = false;
  for (int c = buffer->sbumpc(); c != std::char_traits<char>::eof(); c = buffer->sbumpc()) {
    any = true;
    if (c == '\n') return true;
    if (line.size() >= max_cassette_line) {
      too_long = true;
      return true;
    }
    line += static_cast<char>(c);
  }
  return any;
}

Error bad_line(const std::string& path, std::size_t number, const std::string& why) {
  return make_error(ErrorKind::invalid_input, "not a cassette line: " + why,
                    path + ": line " + std::to_string(number));
}

}  // namespace

std::string exchange_key(std::string_view tag, const HttpRequest& request) {
  Sha256Hasher hasher;
  hasher.update(tag);
  hasher.update(std::string_view("\x1f", 1));
  hasher.update(request.method);
  hasher.update(std::string_view("\x1f", 1));
  hasher.update(path_of(request.url));
  hasher.update(std::string_view("\x1f", 1));
  hasher.update(request.body);
  return hasher.hex();
}

Result<std::shared_ptr<Transport>> make_recording_transport(std::shared_ptr<Transport> inner,
                                                            const std::string& path,
                                                            std::string tag) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return make_error(ErrorKind::invalid_input,
                      std::string("cannot open the cassette: ") + std::strerror(errno), path);
  }
  return std::shared_ptr<Transport>(
      std::make_shared<RecordingTransport>(std::move(inner), fd, path, std::move(tag)));
}

Result<std::shared_ptr<Transport>> make_replay_transport(const std::string& path, std::string tag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorKind::invalid_input, "cannot open the cassette", path);
  std::unordered_map<std::string, HttpResponse> recorded;
  std::string text;
  std::size_t number = 0;
  bool too_long = false;
  while (next_line(in, text, too_long)) {
    ++number;
    if (too_long) return bad_line(path, number, "longer than 128 MiB");
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto parsed = detail::parse_json(text, ErrorKind::invalid_input, "the cassette line");
    if (!parsed || !parsed->is_object()) return bad_line(path, number, "not a JSON object");
    const detail::Json& line = parsed.value();
    const auto key = line.find("key");
    const auto status = line.find("status");
    const auto body = line.find("body");
    if (key == line.end() || !key->is_string() || status == line.end() ||
        !status->is_number_integer() || body == line.end() || !body->is_string()) {
      return bad_line(path, number,
                      "it needs a string \"key\", an integer \"status\" and a string "
                      "\"body\"");
    }
    HttpResponse response;
    response.status = status->get<int>();
    response.body = body->get<std::string>();
    const auto headers = line.find("headers");
    if (headers != line.end() && headers->is_array()) {
      for (const auto& header : *headers) {
        if (header.is_array() && header.size() == 2 && header[0].is_string() &&
            header[1].is_string()) {
          response.headers.emplace_back(header[0].get<std::string>(), header[1].get<std::string>());
        }
      }
    }
    recorded[key->get<std::string>()] = std::move(response);
  }
  return std::shared_ptr<Transport>(
      std::make_shared<ReplayTransport>(std::move(recorded), path, std::move(tag)));
}

}  // namespace clef
