// The implementation of shard_lines.hpp: clef merge's index of the shards' result lines.
#include "batch/shard_lines.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "batch/batch_input.hpp"
#include "batch/batch_output.hpp"
#include "clef/batch.hpp"
#include "clef/decision_json.hpp"
#include "clef/json.hpp"

namespace clef::cli {
namespace {

using Json = nlohmann::ordered_json;

Error read_error(const std::string& path) {
  return make_error(ErrorKind::invalid_input,
                    std::string("cannot read the shard's output: ") + std::strerror(errno), path);
}

/// Calls `line(offset, text)` for each whole line of `fd` (a line cut off by the end of the file
/// is torn, and skipped; so is one longer than max_input_line); reads in blocks, so memory is a
/// block and the longest line.
/// Calls `line` for each whole line of the file; counts in `torn` the lines that cannot be
/// results: past max_input_line, or a last line without its newline (a write cut short, as
/// --resume reads it).
template <typename OnLine>
Status for_each_line(int fd, const std::string& path, const std::atomic<bool>* stop,
                     std::size_t& torn, const OnLine& line) {
  std::vector<char> block(1 << 20);
  std::string partial;
  bool too_long = false;
  std::uint64_t read_so_far = 0, line_start = 0;
  for (;;) {
    if (stop && stop->load())
      return make_error(ErrorKind::cancelled, "merge was interrupted", path);
    const ssize_t n = ::read(fd, block.data(), block.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return read_error(path);
    if (n == 0) {
      torn += !partial.empty() || too_long;
      return {};
    }
    const char* at = block.data();
    const char* end = at + n;
    while (at < end) {
      const char* newline = static_cast<const char*>(std::memchr(at, '\n', end - at));
      const char* stop_at = newline ? newline : end;
      if (!too_long) {
        if (partial.size() + (stop_at - at) > max_input_line)
          too_long = true, partial.clear();
        else
          partial.append(at, stop_at);
      }
      if (!newline) break;
      if (!too_long) {
        if (auto status = line(line_start, partial); !status) return status;
      } else {
        ++torn;
      }
      partial.clear();
      too_long = false;
      line_start = read_so_far + static_cast<std::uint64_t>(newline + 1 - block.data());
      at = newline + 1;
    }
    read_so_far += static_cast<std::uint64_t>(n);
  }
}

}  // namespace

ShardIndex::~ShardIndex() {
  for (int fd : m_files) ::close(fd);
}

Status ShardIndex::add_shard(const std::string& path, std::uint32_t number, const Shard& shard,
                             const std::atomic<bool>* stop) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return make_error(ErrorKind::invalid_input,
                      std::string("cannot open the shard's output: ") + std::strerror(errno), path);
  }
  m_files.push_back(fd);
  m_paths.push_back(path);
  struct stat info {};
  if (::fstat(fd, &info) != 0) return read_error(path);
  if (!S_ISREG(info.st_mode)) {
    return make_error(ErrorKind::invalid_input,
                      "a shard's output must be a regular file (merge reads its lines twice)",
                      path);
  }
  std::size_t number_of_line = 0;
  return for_each_line(
      fd, path, stop, m_left_out, [&](std::uint64_t offset, const std::string& text) {
        ++number_of_line;
        auto json = parse_json(text, "the line");
        if (!json || !json->is_object()) {  // torn: its item is missing
          ++m_left_out;
          return Status{};
        }
        const LineAt at{number, static_cast<std::uint32_t>(text.size()), offset,
                        is_kept_result(json.value())};
        if (const auto cost = json->find("cost"); cost != json->end()) {
          const Cost read = cost_from_json(*cost);
          if (read.usd) m_spent_usd += *read.usd;
          if (!read.usd) ++m_cost_unknown;
        }
        const auto id = json->find("id");
        if (id == json->end() || id->is_null()) {
          const auto line = json->find("line");
          if (line != json->end() && line->is_number_unsigned())
            m_by_line[line->get<std::size_t>()] = at;
          else
            ++m_left_out;  // neither an id nor a line: nothing to pair it with
          return Status{};
        }
        if (!in_shard(shard, *id)) {
          return Status(make_error(ErrorKind::invalid_input,
                                   "line " + std::to_string(number_of_line) + " has the id " +
                                       id_key(*id) + ", which is shard " +
                                       std::to_string(shard_of(id_key(*id), shard.count)) +
                                       "'s, not " + shard.text() + "'s",
                                   path));
        }
        m_by_id[id_key(*id)].push_back(at);
        return Status{};
      });
}

std::optional<LineAt> ShardIndex::take_id(const std::string& key) {
  const auto found = m_by_id.find(key);
  if (found == m_by_id.end()) return std::nullopt;
  const LineAt at = found->second.front();
  found->second.erase(found->second.begin());
  if (found->second.empty()) m_by_id.erase(found);  // memory goes down as the input is read
  return at;
}

std::optional<LineAt> ShardIndex::take_line(std::size_t line) {
  const auto found = m_by_line.find(line);
  if (found == m_by_line.end()) return std::nullopt;
  const LineAt at = found->second;
  m_by_line.erase(found);
  return at;
}

std::optional<std::string> ShardIndex::repeated_id() const {
  for (const auto& [key, lines] : m_by_id) {
    if (lines.size() > 1) return key;
  }
  return std::nullopt;
}

const std::string& ShardIndex::path_of(const std::string& key) const {
  static const std::string none;
  const auto found = m_by_id.find(key);
  return found == m_by_id.end() || found->second.empty() ? none
                                                         : m_paths[found->second.front().shard];
}

std::optional<std::string> ShardIndex::first_left() const {
  if (m_by_id.empty()) return std::nullopt;
  return m_by_id.begin()->first;
}

Result<std::string> ShardIndex::read(const LineAt& at) const {
  std::string line(at.length, '\0');
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::pread(m_files[at.shard], line.data() + done, line.size() - done,
                              static_cast<off_t>(at.offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;  // the shard was cut short since it was indexed
      return read_error(m_paths[at.shard]);
    }
    done += static_cast<std::size_t>(n);
  }
  return line;
}

Status copy_lines(const std::vector<LineAt>& lines, const ShardIndex& index, LineWriter& out) {
  for (const LineAt& at : lines) {
    auto line = index.read(at);
    if (!line) return line.error();
    if (auto written = out.write_line(line.value()); !written) return written;
  }
  return out.flush();
}

}  // namespace clef::cli
