// The CLI's own line reader (InputFile::read_line, which scans its buffer's block for a line's
// end) against clef::read_line (a byte at a time): the same lines, the same flags, the same end,
// over a pipe written in pieces of random sizes, so that lines straddle the blocks read(2) gives.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "clef/json.hpp"
#include "common/input_file.hpp"

namespace {

/// Lines of every kind read_line tells apart: empty, short, at the cap and past it, far past it
/// (the stream then fails), CRs, NULs and bytes past 0x7f; with or without a last newline.
std::string random_input(std::mt19937& random, std::size_t cap) {
  std::string text;
  const int lines = static_cast<int>(random() % 40);
  for (int i = 0; i < lines; ++i) {
    std::size_t length = random() % 4;
    switch (random() % 6) {
      case 0:
        length = cap - 1 + random() % 3;
        break;  // at the cap, give or take one
      case 1:
        length = cap + random() % (cap * 2);
        break;
      case 2:
        if (random() % 8 == 0) length = cap * 9 + random() % cap;
        break;  // fails the stream
      default:
        length = random() % (cap / 2);
        break;
    }
    for (std::size_t b = 0; b < length; ++b) {
      const auto pick = static_cast<unsigned>(random() % 20);
      text += pick == 0   ? '\r'
              : pick == 1 ? '\0'
              : pick == 2 ? '\xc3'
                          : static_cast<char>('a' + pick);
    }
    if (i + 1 < lines || random() % 2) text += '\n';
  }
  return text;
}

struct Read {
  bool got;
  clef::Line line;
};

std::vector<Read> read_all(std::istream& in, std::size_t cap,
                           bool (*reader)(std::istream&, clef::Line&, std::size_t)) {
  std::vector<Read> reads;
  for (;;) {
    Read read{false, {}};
    read.got = reader(in, read.line, cap);
    reads.push_back(read);
    if (!read.got) return reads;
  }
}

bool library_read(std::istream& in, clef::Line& line, std::size_t cap) {
  return clef::read_line(in, line, cap);
}

TEST(CliReadLine, TheBlockReaderReadsWhatTheByteReaderReads) {
  std::mt19937 random(20261207);
  constexpr std::size_t cap = 50;
  // The reader gives up on a line that never ends and closes the pipe: the writer's next write
  // fails with EPIPE, not the test with SIGPIPE.
  struct sigaction ignore {
  }, before{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &before), 0);
  for (int round = 0; round < 300; ++round) {
    const std::string text = random_input(random, cap);
    int ends[2];
    ASSERT_EQ(::pipe(ends), 0);
    std::thread writer([&, text, seed = random()] {
      std::mt19937 sizes(static_cast<unsigned>(seed));
      for (std::size_t at = 0; at < text.size();) {
        const std::size_t piece = std::min<std::size_t>(1 + sizes() % 97, text.size() - at);
        const ssize_t n = ::write(ends[1], text.data() + at, piece);
        if (n <= 0) break;  // the reader gave up (a line that never ends): nothing more to say
        at += static_cast<std::size_t>(n);
      }
      ::close(ends[1]);
    });
    std::istringstream unused;
    auto input = clef::cli::InputFile::open("/dev/fd/" + std::to_string(ends[0]), "the input",
                                            unused, nullptr);
    ASSERT_TRUE(input) << input.error().to_string();
    const auto fast = read_all(input->stream(), cap, &clef::cli::InputFile::read_line);
    const bool fast_bad = input->stream().bad(), fast_eof = input->stream().eof();
    input = clef::make_error(clef::ErrorKind::invalid_input, "closed");  // closes its end
    ::close(ends[0]);
    writer.join();
    std::istringstream whole(text);
    const auto slow = read_all(whole, cap, &library_read);
    ASSERT_EQ(fast.size(), slow.size()) << "round " << round;
    for (std::size_t i = 0; i < slow.size(); ++i) {
      EXPECT_EQ(fast[i].got, slow[i].got) << "round " << round << ", read " << i;
      EXPECT_EQ(fast[i].line.text, slow[i].line.text) << "round " << round << ", read " << i;
      EXPECT_EQ(fast[i].line.too_long, slow[i].line.too_long) << "round " << round;
      EXPECT_EQ(fast[i].line.has_newline, slow[i].line.has_newline) << "round " << round;
    }
    EXPECT_EQ(fast_bad, whole.bad()) << "round " << round;
    EXPECT_EQ(fast_eof, whole.eof()) << "round " << round;
  }
  ::sigaction(SIGPIPE, &before, nullptr);
}

}  // namespace
