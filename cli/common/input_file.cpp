// The implementation of input_file.hpp: reading a file the user named, line by line.
#include "common/input_file.hpp"

#include "clef/digest.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <streambuf>
#include <vector>

namespace clef::cli {

std::string system_reason(int error_number) {
  return std::strerror(error_number);
}

PathKind path_kind(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return PathKind::missing;
  if (S_ISREG(info.st_mode)) return PathKind::regular;
  if (S_ISDIR(info.st_mode)) return PathKind::directory;
  return PathKind::stream;
}

/// read(2) under a std::streambuf. libstdc++'s file buffer retries a read interrupted by a
/// signal, so a FIFO without a writer would hold clef past SIGINT; this one waits in poll(2)
/// a tenth of a second at a time and gives up once the stop flag is set: it throws then, as
/// libstdc++'s own buffer does when read(2) fails, so that a line cut off by the stop is never
/// taken for one the input cut off.
class InputFile::Buffer final : public std::streambuf {
 public:
  Buffer(int fd, bool owned, bool waits, const std::atomic<bool>* stop)
      : m_fd(fd), m_owned(owned), m_waits(waits), m_stop(stop), m_bytes(1 << 16) {}
  ~Buffer() override {
    if (m_owned) ::close(m_fd);
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  /// As clef::read_line, from this buffer's block; the flags it would set on the stream are
  /// added to `state`.
  bool read_line(Line& line, std::size_t max_bytes, std::ios::iostate& state) {
    line.text.clear();
    line.too_long = false;
    line.has_newline = false;
    const std::size_t most_read_past = max_bytes > SIZE_MAX / 8 ? SIZE_MAX : max_bytes * 8;
    std::size_t past = 0;
    bool any = false;
    try {
      while (sgetc() != traits_type::eof()) {  // a block to read (underflow may throw)
        any = true;
        char* const begin = gptr();
        const auto available = static_cast<std::size_t>(egptr() - begin);
        auto* const end = static_cast<char*>(std::memchr(begin, '\n', available));
        const std::size_t bytes = end ? static_cast<std::size_t>(end - begin) : available;
        const std::size_t kept = std::min(bytes, max_bytes - std::min(max_bytes, line.text.size()));
        line.text.append(begin, kept);
        if (kept < bytes) {
          line.too_long = true;
          past += bytes - kept;
          if (past > most_read_past) {
            state |= std::ios::badbit;
            return false;
          }
        }
        setg(eback(), end ? end + 1 : egptr(), egptr());
        if (end) {
          line.has_newline = true;
          return true;
        }
      }
    } catch (...) {
      state |= std::ios::badbit;
      return false;
    }
    if (!any) state |= std::ios::eofbit;
    return any;
  }

  bool interrupted() const noexcept { return m_interrupted; }
  void interrupt() noexcept { m_interrupt_asked = true; }
  int error_number() const noexcept { return m_error; }
  std::string sha256() const { return m_hasher.hex(); }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    for (;;) {
      if ((m_stop && m_stop->load()) || m_interrupt_asked.load()) {
        // A failure, not an end: the line read so far was cut off by the interruption, not by
        // the input, and must not become an item ("truncated?"). read_line and the stream's own
        // functions catch this and set badbit; failure() then says the reading was interrupted.
        m_interrupted = true;
        throw std::ios_base::failure("the reading was interrupted");
      }
      if (m_waits && !ready()) continue;
      const ssize_t n = ::read(m_fd, m_bytes.data(), m_bytes.size());
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n < 0) m_error = errno;
      if (n <= 0) return traits_type::eof();
      m_hasher.update(std::string_view(m_bytes.data(), static_cast<std::size_t>(n)));
      setg(m_bytes.data(), m_bytes.data(), m_bytes.data() + n);
      return traits_type::to_int_type(*gptr());
    }
  }

 private:
  /// True when a read will not wait (data, an end, an error); false after a tenth of a second.
  bool ready() {
    pollfd watched{m_fd, POLLIN, 0};
    const int n = ::poll(&watched, 1, 100);
    return n > 0;
  }

  const int m_fd;
  const bool m_owned;
  const bool m_waits;  ///< Not a regular file: a read may wait.
  const std::atomic<bool>* const m_stop;
  std::atomic<bool> m_interrupt_asked{false};  ///< interrupt(), from another thread.
  std::vector<char> m_bytes;
  Sha256Hasher m_hasher;  ///< Of every byte read: a stream is hashed as it is read, once.
  bool m_interrupted = false;
  int m_error = 0;
};

Result<InputFile> InputFile::open(const std::string& path, const std::string& what,
                                  std::istream& standard_input, const std::atomic<bool>* stop) {
  InputFile file;
  file.m_path = path == "-" ? "stdin" : path;
  file.m_what = what;
  int fd = -1;
  bool owned = true;
  if (path == "-") {
    if (&standard_input != &std::cin) {  // a caller's own stream (the tests'): read as it is
      file.m_stream = &standard_input;
      return file;
    }
    fd = STDIN_FILENO;
    owned = false;
  } else {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, deaf to
    // signals; reads wait in poll(2) instead, where the stop flag is seen.
    do {
      fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
      return make_error(ErrorKind::invalid_input,
                        "cannot open " + what + ": " + system_reason(errno), path);
    }
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || S_ISDIR(info.st_mode)) {
    const int why = S_ISDIR(info.st_mode) ? EISDIR : errno;
    if (owned) ::close(fd);
    return make_error(ErrorKind::invalid_input, "cannot read " + what + ": " + system_reason(why),
                      file.m_path);
  }
  file.m_regular = S_ISREG(info.st_mode);
  file.m_buffer = std::make_unique<Buffer>(fd, owned, !file.m_regular, stop);
  file.m_own_stream = std::make_unique<std::istream>(file.m_buffer.get());
  file.m_stream = file.m_own_stream.get();
  return file;
}

bool InputFile::read_line(std::istream& in, Line& line, std::size_t max_bytes) {
  auto* own = dynamic_cast<Buffer*>(in.rdbuf());
  if (!own) return clef::read_line(in, line, max_bytes);
  std::ios::iostate state = std::ios::goodbit;
  const bool read = own->read_line(line, max_bytes, state);
  if (state != std::ios::goodbit) in.setstate(state);
  return read;
}

InputFile::InputFile(InputFile&& other) noexcept = default;
InputFile& InputFile::operator=(InputFile&& other) noexcept = default;
InputFile::~InputFile() = default;

void InputFile::interrupt() noexcept {
  if (m_buffer) m_buffer->interrupt();
}

std::optional<std::string> InputFile::sha256_of_what_was_read() const {
  if (!m_buffer) return std::nullopt;
  return m_buffer->sha256();
}

std::optional<Error> InputFile::failure() const {
  if (m_buffer && m_buffer->interrupted()) {
    return make_error(ErrorKind::cancelled, "reading " + m_what + " was interrupted", m_path);
  }
  const int why = m_buffer ? m_buffer->error_number() : 0;
  if (why != 0) {
    return make_error(ErrorKind::invalid_input, "cannot read " + m_what + ": " + system_reason(why),
                      m_path);
  }
  if (m_stream && m_stream->bad()) {
    return make_error(ErrorKind::invalid_input,
                      "cannot read " + m_what +
                          " to the end (a line that never ends, or the "
                          "system failed the read)",
                      m_path);
  }
  return std::nullopt;
}

}  // namespace clef::cli
