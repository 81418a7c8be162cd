// The implementation of batch_output.hpp: clef batch's output file.
#include "batch/batch_output.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>

#include "batch/batch_input.hpp"
#include "clef/json.hpp"
#include "common/files.hpp"
#include "common/output_target.hpp"
#include "common/replacement_file.hpp"

namespace clef::cli {
namespace {

/// --resume with OUTPUT a stream: refused, as early as it is known.
Error resume_refused(const std::string& path) {
  return make_error(ErrorKind::invalid_input,
                    "--resume reads OUTPUT back, and a FIFO, pipe, device or the shell's own "
                    "descriptor cannot be",
                    path);
}

using Json = nlohmann::ordered_json;

/// A failure of the system (disk, permissions), told apart from refusals by its kind: the
/// CLI maps it to ExitCode::output, never to a usage error.
Error io_error(const std::string& what, const std::string& path) {
  return make_error(ErrorKind::connection_failed, what + ": " + std::strerror(errno), path);
}

/// An fd open on `path`, holding its exclusive lock, or why not.
Result<int> open_locked(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("cannot open the output file", path);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const bool busy = errno == EWOULDBLOCK;  // a refusal: usage, not a disk failure
    Error error = busy ? make_error(ErrorKind::invalid_input,
                                    "another clef batch is writing this file; wait for it to end, "
                                    "or write to another -o",
                                    path)
                       : io_error("cannot lock the output file", path);
    ::close(fd);
    return error;
  }
  return fd;
}

/// Whether two recorded endpoints are one run's. A fleet's hosts change between a run and its
/// --resume (hosts join and leave): when either side had several hosts, the path they share is
/// what must match, whether the other side had one host or three. One host and another are two
/// runs.
bool same_endpoint(const std::string& was, const std::string& now) {
  if (was == now) return true;
  static const std::string several = "several hosts: ";
  const auto path_of = [](const std::string& endpoint) -> std::string {
    if (endpoint.rfind(several, 0) == 0) return endpoint.substr(several.size());
    const auto scheme = endpoint.find("://");
    const auto path =
        scheme == std::string::npos ? std::string::npos : endpoint.find('/', scheme + 3);
    return path == std::string::npos ? "" : endpoint.substr(path);
  };
  if (was.rfind(several, 0) != 0 && now.rfind(several, 0) != 0) return false;
  return path_of(was) == path_of(now);
}

/// The record an earlier run left at `path`, read once for both its checks and its versions:
/// nullopt when there is none, a value that is not an object when it cannot be read.
std::optional<Json> earlier_record(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  auto text = read_file(path, "the run record", std::cin);
  auto old = parse_json(text ? text.value() : std::string(), "the run record");
  return old ? std::move(old).value() : Json();
}

/// What differs between the record on disk (`old`, at `path`) and this run's, one "name: was
/// X, now Y" each.
std::vector<std::string> record_differences(const std::string& path, const std::optional<Json>& old,
                                            const RunRecord& record) {
  if (!old) {
    return std::vector<std::string>{"there is no run record (" + path +
                                    "): the file was not written by this version of clef batch"};
  }
  if (!old->is_object()) {
    return std::vector<std::string>{"the run record " + path + " is unreadable"};
  }
  std::vector<std::string> differences;
  for (const auto& [name, value] : record.fields) {
    auto it = old->find(name);
    const std::string was = it != old->end() && it->is_string() ? it->get<std::string>() : "";
    if (was == value || (name == "endpoint" && same_endpoint(was, value))) continue;
    differences.push_back(name + ": was \"" + was + "\", now \"" + value + "\"");
  }
  // What the old run recorded and this one does not: a shard's output resumed without --shard
  // would become the whole run's.
  for (const auto& item : old->items()) {
    const std::string& name = item.key();
    const auto& value = item.value();
    const bool kept = std::any_of(record.fields.begin(), record.fields.end(),
                                  [&](const auto& field) { return field.first == name; });
    if (kept || name == "model_version" || !value.is_string() || value.get<std::string>().empty())
      continue;
    differences.push_back(name + ": was \"" + value.get<std::string>() + "\", now none");
  }
  return differences;
}

/// The record a resumed run writes: this run's, with the versions of the model the file's lines
/// were answered by so far ("A, then B" once the model changed under its name).
RunRecord resumed_record(const std::optional<Json>& old, const RunRecord& record,
                         const OutputOptions& options) {
  RunRecord resumed = record;
  if (!old || !old->is_object()) return resumed;
  const auto found = old->find("model_version");
  if (found == old->end() || !found->is_string() || found->get<std::string>().empty())
    return resumed;
  const std::string was = found->get<std::string>();
  const std::string& now = record.model_version;
  const bool same = now.empty() || (was.size() >= now.size() &&
                                    was.compare(was.size() - now.size(), now.size(), now) == 0);
  if (!same && options.on_model_change) options.on_model_change(was);
  resumed.model_version = same ? was : was + ", then " + now;
  return resumed;
}

/// Keeps the result lines of the locked file `fd` at `path`: writes them to a locked
/// replacement file (a name no one can guess) that then takes `path`'s place, so the lock moves
/// with the content and no second writer can slip in between. Returns the new fd.
Result<int> keep_results(int fd, const std::string& path, std::unordered_set<std::string>& done,
                         const OutputOptions& options) {
  auto kept_file = ReplacementFile::create(path);
  if (!kept_file) return kept_file.error();
  if (::flock(kept_file->fd(), LOCK_EX | LOCK_NB) != 0) return io_error("cannot lock", path);
  std::ifstream old(path, std::ios::binary);
  Line line;
  std::string kept;
  bool ok = true;
  std::size_t number = 0;  // of the line read
  while (ok && read_line(old, line, max_input_line)) {
    ++number;
    if (!line.has_newline || line.too_long) continue;  // a torn last line, or no result
    auto json = parse_json(line.text, "line");
    if (!json || !is_kept_result(json.value(), options.asked)) continue;
    // Two answers under one id came from input lines that repeat it: which line each answers
    // cannot be told, so no line can be kept or redone safely, and dropping one loses a result.
    if (const std::string id = id_key((*json)["id"]); !done.insert(id).second) {
      return make_error(ErrorKind::invalid_input,
                        "--resume cannot continue this file: id " + id +
                            " is on more than one result line (the second is line " +
                            std::to_string(number) +
                            "): input lines that repeat it, or a line copied twice; which line "
                            "each answers cannot be told. Remove a copied line, give every input "
                            "line its own id (--id-field), or run again with --overwrite",
                        path);
    }
    if (options.on_kept) options.on_kept(json.value());
    kept += line.text;
    kept += '\n';
    if (kept.size() > (1u << 20)) {
      ok = write_all(kept_file->fd(), kept);
      kept.clear();
    }
  }
  if (old.bad()) return io_error("cannot read", path);
  ok = ok && write_all(kept_file->fd(), kept);
  if (!ok) return io_error("cannot rewrite", path);
  if (auto committed = kept_file->commit(); !committed) return committed.error();
  ::close(fd);
  return kept_file->release();
}

}  // namespace

Json RunRecord::to_json() const {
  Json out = Json::object();
  for (const auto& [name, value] : fields) out[name] = value;
  if (!model_version.empty()) out["model_version"] = model_version;
  return out;
}

std::string run_record_path(const std::string& output) {
  // Beside the file the output's links lead to (the file a run writes): one record, whichever
  // name a run or its --resume gave.
  return output_path(output).path + ".clef-run.json";
}

bool all_answered(const Decision& decision) {
  for (const auto& answer : decision.answers) {
    if (!answer.ok() && answer.status != AnswerStatus::abstained) return false;
  }
  return true;
}

bool is_kept_result(const Json& line,
                    const std::vector<std::pair<std::string, std::string>>& asked) {
  if (!line.is_object()) return false;
  auto id = line.find("id");
  if (id == line.end() || !(id->is_string() || id->is_number())) return false;
  if (line.contains("error")) return false;
  auto answers = line.find("answers");
  if (answers == line.end() || !answers->is_object() || answers->empty()) return false;
  for (const auto& answer : *answers) {
    if (!answer.is_object()) return false;
    auto status = answer.find("status");
    if (status == answer.end() || (*status != "ok" && *status != "abstained")) return false;
    // Every answer with a value names its winner (decision_members.cpp writes it first).
    auto winner = answer.find("winner");
    if (winner == answer.end() || !winner->is_string()) return false;
  }
  for (const auto& [name, type] : asked) {
    auto answer = answers->find(name);
    if (answer == answers->end()) return false;
    auto written = answer->find("type");
    if (written == answer->end() || *written != type) return false;
  }
  return true;
}

void append_id(std::string& out, const Json& id) {
  if (id.is_string())
    append_json_text(out, id.get_ref<const std::string&>());
  else if (id.is_number_integer())
    out += id.is_number_unsigned() ? std::to_string(id.get<std::uint64_t>())
                                   : std::to_string(id.get<std::int64_t>());
  else
    out += dump_json(id);
}

std::string id_key(const Json& id) {
  std::string key;
  append_id(key, id);
  return key;
}

Result<OutputFile> OutputFile::open(const std::string& path, const OutputOptions& options,
                                    const RunRecord& record, std::unordered_set<std::string>& done,
                                    std::ostream& stdout_stream, bool& io_failed) {
  io_failed = false;
  if (path == "-") return OutputFile(stdout_stream);
  auto opened = open_any(path, options, record, done);
  // Refusals are invalid_input; anything the system said no to carries its errno text.
  if (!opened) io_failed = opened.error().kind != ErrorKind::invalid_input;
  return opened;
}

Result<OutputFile> OutputFile::open_any(const std::string& path, const OutputOptions& options,
                                        const RunRecord& record,
                                        std::unordered_set<std::string>& done) {
  if (auto named = descriptor_named(path)) {
    // -o /dev/stdout: the shell's descriptor, its offset and O_APPEND kept (reopening
    // /proc/self/fd/1 would write from the start of a file opened with >>).
    const int copy = ::fcntl(*named, F_DUPFD_CLOEXEC, 3);
    if (copy < 0) return io_error("cannot write to", path);
    return open_stream(OutputFile(copy, 0), path, options, false);
  }
  if (output_path(path).kind == PathKind::stream) {
    // Refused before the open, which waits for a FIFO's reader.
    if (options.resume) return resume_refused(path);
    auto fd = open_in_place(path, options.stop);
    if (!fd) return fd.error();
    return open_stream(OutputFile(fd.value(), 0), path, options, true);
  }
  // Through links, the file they name: a --resume rewrites it whole (keep_results), and a
  // rewrite at the link's own path would put a file where the link was and leave the file it
  // named behind, unlocked.
  return open_file(output_path(path).path, options, record, done);
}

Result<OutputFile> OutputFile::open_file(const std::string& path, const OutputOptions& options,
                                         const RunRecord& record,
                                         std::unordered_set<std::string>& done) {
  auto fd = open_locked(path, O_RDWR | O_CREAT);
  if (!fd) return fd.error();
  OutputFile file(fd.value(), 0);  // closes the fd on every early return
  struct stat info {};
  if (::fstat(file.m_fd, &info) != 0) return io_error("cannot read", path);
  if (!S_ISREG(info.st_mode)) return open_stream(std::move(file), path, options, false);
  // Ours now, with its lock: what a rewrite killed before ours left beside it goes.
  ReplacementFile::remove_abandoned(path);
  const bool exists = info.st_size > 0;
  const std::string record_file = run_record_path(path);
  if (exists && !options.resume && !options.overwrite) {
    return make_error(ErrorKind::invalid_input,
                      "the output file exists: --resume continues it, --overwrite replaces it",
                      path);
  }
  RunRecord written = record;
  if (exists && options.resume) {
    const std::optional<Json> old = earlier_record(record_file);
    const std::vector<std::string> differences = record_differences(record_file, old, record);
    if (!differences.empty() && !options.force_resume) {
      std::string message = "--resume would mix two different runs in one file:";
      for (const auto& difference : differences) message += "\n  " + difference;
      message += "\n" + options.after_other_run;
      return make_error(ErrorKind::invalid_input, message, path);
    }
    auto kept = keep_results(file.m_fd, path, done, options);
    if (!kept) return kept.error();  // the old fd is still ours: closed with `file`
    file.m_fd = kept.value();        // keep_results closed the old one
    written = resumed_record(old, record, options);
  } else if (exists && ::ftruncate(file.m_fd, 0) != 0) {
    return io_error("cannot truncate", path);
  }
  if (auto status = replace_file(record_file, written.to_json().dump(2) + "\n"); !status) {
    return status.error();
  }
  const int flags = ::fcntl(file.m_fd, F_GETFL);
  if (flags < 0 || ::fcntl(file.m_fd, F_SETFL, flags | O_APPEND) != 0) {
    return io_error("cannot append to", path);
  }
  if (::fstat(file.m_fd, &info) != 0) return io_error("cannot read", path);
  file.m_size = static_cast<std::uint64_t>(info.st_size);
  return file;
}

Result<OutputFile> OutputFile::open_stream(OutputFile file, const std::string& path,
                                           const OutputOptions& options, bool own_description) {
  if (options.resume) return resume_refused(path);
  // An open of our own never waits in write(2), deaf to signals: write_line polls and watches
  // the stop flag. A descriptor the shell shares is left blocking, as stdout is: O_NONBLOCK
  // would outlive clef in the processes that share it.
  const int flags = ::fcntl(file.m_fd, F_GETFL);
  if (own_description && (flags < 0 || ::fcntl(file.m_fd, F_SETFL, flags | O_NONBLOCK) != 0)) {
    return io_error("cannot write to", path);
  }
  file.m_regular = false;
  file.m_stop = options.stop;
  return file;
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : m_fd(other.m_fd),
      m_size(other.m_size),
      m_stream(other.m_stream),
      m_regular(other.m_regular),
      m_stop(other.m_stop) {
  other.m_fd = -1;
}

OutputFile::~OutputFile() {
  if (m_fd >= 0) ::close(m_fd);
}

std::optional<std::uint64_t> OutputFile::write_line(const std::string& line) {
  if (m_stream) {
    // One piece: a line longer than the stream's buffer and its newline still go in one write.
    if (!(*m_stream << line + '\n' << std::flush)) return std::nullopt;
    return 0;
  }
  if (!m_regular) {
    FdWriter stream(m_fd, m_stop);
    auto written = stream.write_line(line);
    if (written) written = stream.flush();
    if (!written) {
      errno = written.error().kind == ErrorKind::cancelled ? EINTR : (errno ? errno : EIO);
      return std::nullopt;
    }
    return 0;
  }
  if (!write_all(m_fd, line + "\n")) {
    // A short write (disk full, a file-size limit) must not leave half a line behind.
    const int saved = errno;
    // Best effort: the write's own error is the one reported. (A (void) cast does not quiet
    // glibc's warn_unused_result under _FORTIFY_SOURCE; a named result does.)
    const int truncated = ::ftruncate(m_fd, static_cast<off_t>(m_size));
    static_cast<void>(truncated);
    errno = saved;
    return std::nullopt;
  }
  const std::uint64_t at = m_size;
  m_size += line.size() + 1;
  return at;
}

std::optional<std::string> OutputFile::read_line(std::uint64_t offset) const {
  if (m_fd < 0) return std::nullopt;
  std::string line;
  char buffer[4096];
  for (;;) {
    const ssize_t n =
        ::pread(m_fd, buffer, sizeof buffer, static_cast<off_t>(offset + line.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    const auto end = std::find(buffer, buffer + n, '\n');
    line.append(buffer, end);
    if (end != buffer + n) return line;
  }
}

}  // namespace clef::cli
