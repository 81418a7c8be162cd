// The implementation of clef/cassette.hpp: record exchanges with a server into a cassette file, and
// replay them with no network — so an application's tests, and a CI job, run without a model.
#include "clef/cassette.hpp"
#include "store/cassette_lines.hpp"
#include "store/stage.hpp"
#include "util/ascii.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "clef/digest.hpp"
#include "util/json_text.hpp"
#include "util/redact.hpp"
#include "util/url_path.hpp"
#include "util/write_all.hpp"

namespace clef {
namespace {

/// Response headers a replay must give back: what the client reads from a response.
bool header_matters(const std::string& name) {
  return name == "content-type" || name == "retry-after" || name == "retry-after-ms" ||
         name == "x-typesafe-request-id" || name == "cf-ai-req-id" || name == "cf-ray" ||
         name == "x-request-id" || name == "cf-ai-neurons";  // what the answer cost
}

/// The path a recording is keyed by: "/" for a URL without one.
std::string path_of(const std::string& url) {
  const std::string_view path = detail::url_path(url);
  return path.empty() ? std::string("/") : std::string(path);
}

/// "questions team, refund; state "I was charged twice…"" for a miss.
std::string describe(const std::string& body) {
  auto parsed = clef::parse_json(body, "the request");
  if (!parsed || !parsed->is_object()) return "a request that is not a decision";
  std::string questions;
  const auto q = parsed->find("questions");
  if (q != parsed->end() && q->is_object()) {
    for (const auto& item : q->items()) questions += (questions.empty() ? "" : ", ") + item.key();
  }
  std::string state;
  const auto s = parsed->find("state");
  if (s != parsed->end()) state = s->is_string() ? s->get<std::string>() : dump_json(*s);
  if (state.size() > 60) state = state.substr(0, 60) + "…";
  return "questions " + (questions.empty() ? std::string("(none)") : questions) + "; state \"" +
         state + "\"";
}

/// The recorder as a stage (stage.hpp): refuses to send once the cassette cannot be written,
/// and appends each complete response on its way back.
class RecorderStage final : public detail::Stage {
 public:
  RecorderStage(int fd, std::string path, std::string tag)
      : m_fd(fd), m_path(std::move(path)), m_tag(std::move(tag)) {}
  ~RecorderStage() override { ::close(m_fd); }
  RecorderStage(const RecorderStage&) = delete;
  RecorderStage& operator=(const RecorderStage&) = delete;

  std::optional<Result<HttpResponse>> answer(const HttpRequest&, detail::StageNote&) override {
    if (!m_failed.load()) return std::nullopt;
    return Result<HttpResponse>(make_error(ErrorKind::cancelled,
                                           "not sent: the cassette cannot be written, and an "
                                           "answer it does not record would be paid for and lost",
                                           m_path));
  }

  void received(const HttpRequest& request, const detail::StageNote&,
                Result<HttpResponse>& response, bool /*judged*/) override {
    if (!response) return;
    const auto secrets = detail::request_credentials(request);
    detail::Json line = detail::Json::object();
    line["key"] = exchange_key(m_tag, request);
    line["backend"] = m_tag;
    line["method"] = request.method;
    line["path"] = detail::redact_all(path_of(request.url), secrets);
    line["request"] = detail::redact_all(request.body, secrets);
    line["status"] = response->status;
    detail::Json headers = detail::Json::array();
    for (const auto& [name, value] : response->headers) {
      if (header_matters(name)) headers.push_back({name, detail::redact_all(value, secrets)});
    }
    line["headers"] = headers;
    line["body"] = detail::redact_all(response->body, secrets);
    const std::string text = dump_json(line) + "\n";
    std::lock_guard<std::mutex> lock(m_mutex);
    // After a failed write nothing more is appended: the torn line stays the last one.
    if (!m_failed.load() && !detail::write_all(m_fd, text)) {
      m_failure =
          make_error(ErrorKind::invalid_input,
                     std::string("cannot append to the cassette: ") + std::strerror(errno), m_path);
      m_failed = true;
    }
    // The response arrived: the caller keeps it, whatever became of its line.
  }

  std::optional<Error> failure() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_failure;
  }

 private:
  int m_fd;
  std::string m_path;
  std::string m_tag;
  mutable std::mutex m_mutex;
  std::atomic<bool> m_failed{false};
  std::optional<Error> m_failure;
};

class Recorder final : public RecordingTransport {
 public:
  Recorder(std::shared_ptr<RecorderStage> stage, std::shared_ptr<Transport> inner)
      : m_stage(std::move(stage)), m_inner(std::move(inner)) {}
  Result<HttpResponse> send(const HttpRequest& request) override {
    return detail::send_through(*m_stage, *m_inner, request);
  }
  std::optional<Error> failure() const override { return m_stage->failure(); }

 private:
  std::shared_ptr<RecorderStage> m_stage;
  std::shared_ptr<Transport> m_inner;
};

class AsyncRecorder final : public AsyncRecordingTransport, public detail::SharedRequestTransport {
 public:
  AsyncRecorder(std::shared_ptr<RecorderStage> stage, std::shared_ptr<AsyncTransport> inner)
      : m_stage(std::move(stage)),
        m_inner(std::move(inner)),
        m_inner_shared(detail::shared_form(m_inner.get())) {}
  void start(HttpRequest request, ResponseHandler done) override {
    start_shared(std::make_shared<const HttpRequest>(std::move(request)), std::move(done));
  }
  void start_shared(std::shared_ptr<const HttpRequest> request, ResponseHandler done) override {
    detail::start_through(m_stage, *m_inner, m_inner_shared, std::move(request), std::move(done));
  }
  void after(std::chrono::milliseconds delay,
             std::function<void(bool shutting_down)> task) override {
    m_inner->after(delay, std::move(task));
  }
  std::optional<Error> failure() const override { return m_stage->failure(); }
  bool running_here() const override { return m_inner->running_here(); }

 private:
  std::shared_ptr<RecorderStage> m_stage;
  std::shared_ptr<AsyncTransport> m_inner;
  detail::SharedRequestTransport* m_inner_shared;
};

/// A replay answers every request itself, from memory: on a loop it is a stage with nothing
/// further in but the loop's timers.
class ReplayStage final : public detail::Stage {
 public:
  explicit ReplayStage(std::shared_ptr<ReplayTransport> replay) : m_replay(std::move(replay)) {}
  std::optional<Result<HttpResponse>> answer(const HttpRequest& request,
                                             detail::StageNote&) override {
    return m_replay->send(request);
  }
  void received(const HttpRequest&, const detail::StageNote&, Result<HttpResponse>&,
                bool) override {}

 private:
  std::shared_ptr<ReplayTransport> m_replay;
};

class Replay final : public ReplayTransport {
 public:
  Replay(std::unordered_map<std::string, HttpResponse> recorded, std::string path, std::string tag,
         std::vector<std::string> warnings)
      : m_recorded(std::move(recorded)),
        m_path(std::move(path)),
        m_tag(std::move(tag)),
        m_warnings(std::move(warnings)) {}

  Result<HttpResponse> send(const HttpRequest& request) override {
    const auto it = m_recorded.find(exchange_key(m_tag, request));
    if (it != m_recorded.end()) return it->second;
    return make_error(ErrorKind::not_recorded,
                      "the cassette has no recording of this request (" + describe(request.body) +
                          "): record it with --record against a server, or fix the request",
                      m_path);
  }

  const std::vector<std::string>& warnings() const override { return m_warnings; }

 private:
  std::unordered_map<std::string, HttpResponse> m_recorded;
  std::string m_path;
  std::string m_tag;
  std::vector<std::string> m_warnings;
};

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

namespace {

/// The recorder for the cassette at `path`, opened for appending.
Result<std::shared_ptr<RecorderStage>> recorder_stage(const std::string& path, std::string tag) {
  // A FIFO would hold this open(2) until a reader came, deaf to signals. (A device opens at
  // once: /dev/full is how a full disk is tried.)
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 &&
      (S_ISDIR(info.st_mode) || S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode))) {
    return make_error(ErrorKind::invalid_input,
                      "cannot record into it: a cassette is a file, not a directory, FIFO or "
                      "socket",
                      path);
  }
  // 0600: a cassette holds the states sent (tickets, emails) even with no token in it.
  // Read too, to find a torn last line (write-only when reading is not allowed).
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EACCES) fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) {
    return make_error(ErrorKind::invalid_input,
                      std::string("cannot open the cassette: ") + std::strerror(errno), path);
  }
  if (!detail::may_append_to(fd)) {
    ::close(fd);
    return make_error(ErrorKind::invalid_input,
                      "cannot record into it: it is not a cassette (its first or last whole line "
                      "is not a recording clef wrote); record to a new file, or remove this one "
                      "first",
                      path);
  }
  detail::mend_last_line(fd);
  return std::make_shared<RecorderStage>(fd, path, std::move(tag));
}

}  // namespace

Result<std::shared_ptr<RecordingTransport>> make_recording_transport(
    std::shared_ptr<Transport> inner, const std::string& path, std::string tag) {
  auto stage = recorder_stage(path, std::move(tag));
  if (!stage) return stage.error();
  return std::shared_ptr<RecordingTransport>(
      std::make_shared<Recorder>(std::move(stage).value(), std::move(inner)));
}

Result<std::shared_ptr<AsyncRecordingTransport>> make_recording_transport(
    std::shared_ptr<AsyncTransport> inner, const std::string& path, std::string tag) {
  auto stage = recorder_stage(path, std::move(tag));
  if (!stage) return stage.error();
  return std::shared_ptr<AsyncRecordingTransport>(
      std::make_shared<AsyncRecorder>(std::move(stage).value(), std::move(inner)));
}

std::shared_ptr<AsyncTransport> make_async_replay(std::shared_ptr<ReplayTransport> replay) {
  return make_async_replay(std::move(replay), make_curl_loop());
}

std::shared_ptr<AsyncTransport> make_async_replay(std::shared_ptr<ReplayTransport> replay,
                                                  std::shared_ptr<AsyncTransport> loop) {
  return detail::staged_loop(std::make_shared<ReplayStage>(std::move(replay)), std::move(loop));
}

Result<std::shared_ptr<ReplayTransport>> make_replay_transport(const std::string& path,
                                                               std::string tag) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    return make_error(ErrorKind::invalid_input,
                      std::string("cannot read the cassette: ") + std::strerror(EISDIR), path);
  }
  // A FIFO would hold the open(2) until a writer came, deaf to signals.
  if (::stat(path.c_str(), &info) == 0 && (S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode))) {
    return make_error(ErrorKind::invalid_input,
                      "cannot read the cassette: a cassette is a file, not a FIFO or socket", path);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return make_error(ErrorKind::invalid_input,
                      std::string("cannot open the cassette: ") + std::strerror(errno), path);
  }
  std::unordered_map<std::string, HttpResponse> recorded;
  std::vector<std::string> warnings;
  Line line;
  const std::string& text = line.text;
  std::size_t number = 0;
  while (read_line(in, line, detail::max_cassette_line)) {
    ++number;
    if (line.too_long) return bad_line(path, number, "longer than 128 MiB");
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto recording = detail::read_recording(text);
    if (!recording) {
      if (!line.has_newline) {
        warnings.push_back(path + ": line " + std::to_string(number) +
                           " has no newline and is not a whole recording (torn: the recorder "
                           "was stopped or the disk filled mid-line): skipped");
        break;
      }
      return bad_line(path, number, recording.error().message);
    }
    recorded[recording->first] = std::move(recording->second);
  }
  if (in.bad()) {
    // read_line's failure: a directory (EISDIR), an I/O error, a line with no end.
    return make_error(ErrorKind::invalid_input,
                      line.too_long ? "cannot read the cassette: a line with no end"
                                    : "cannot read the cassette: the system failed the read",
                      path);
  }
  return std::shared_ptr<ReplayTransport>(
      std::make_shared<Replay>(std::move(recorded), path, std::move(tag), std::move(warnings)));
}

}  // namespace clef
