// The media probes against the files made to slow them: every probe must be linear in the
// file's size. Each adversarial file is 16 MiB (clef-omni's largest clip); its probe time is
// reported as a ratio to SHA-256 over the same bytes in the same run, a linear pass this
// machine's noise affects alike.
//
//   media_probe_bench [MiB]      (default 16)
//
// Prints one line per file: name, MiB, probe ms, SHA-256 ms, the ratio. Exit 1 when a ratio
// passes 20 (a quadratic probe is thousands of times slower at 16 MiB).
#include <clef/clef.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

std::string be32(std::uint32_t value) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((value >> (24 - 8 * i)) & 0xFF);
  return out;
}

std::string box(const std::string& type, const std::string& body) {
  return be32(static_cast<std::uint32_t>(8 + body.size())) + type + body;
}

std::string ftyp() {
  return box("ftyp", "isom" + be32(0x200) + "isomiso2mp41");
}

/// A trak with track id `id`, timescale 1000 and a sound handler.
std::string trak(std::uint32_t id) {
  const std::string tkhd = box("tkhd", be32(0) + be32(0) + be32(0) + be32(id) + std::string(8, 0));
  const std::string mdhd = box("mdhd", be32(0) + be32(0) + be32(0) + be32(1000) + be32(1000));
  const std::string hdlr = box("hdlr", be32(0) + be32(0) + "soun" + std::string(12, 0));
  return box("trak", tkhd + box("mdia", mdhd + hdlr));
}

/// A moof whose traf is track `id`'s: tfhd, tfdt at `start`, a trun of one 1000-tick sample.
std::string moof(std::uint32_t id, std::uint32_t start) {
  const std::string tfhd = box("tfhd", be32(0x08) + be32(id) + be32(1000));
  const std::string tfdt = box("tfdt", be32(0) + be32(start));
  const std::string trun = box("trun", be32(0) + be32(1));
  return box("moof", box("traf", tfhd + tfdt + trun));
}

/// Many small moov boxes, each with an mvex (a fragmented movie) and a track, then fragments:
/// a probe that rescans the file for each moov is quadratic.
std::string many_movies(std::size_t size) {
  std::string file = ftyp();
  std::uint32_t id = 1;
  while (file.size() < size / 2) file += box("moov", box("mvex", "") + trak(id++));
  std::uint32_t start = 0;
  while (file.size() < size) file += moof(1 + start % id, start), ++start;
  return file;
}

/// One moov of many tracks, and many fragments: a probe that matches each fragment against
/// every track is quadratic.
std::string many_tracks(std::size_t size) {
  std::string tracks;
  std::uint32_t id = 1;
  while (tracks.size() < size / 2) tracks += trak(id++);
  std::string file = ftyp() + box("moov", box("mvex", "") + tracks);
  std::uint32_t start = 0;
  while (file.size() < size) file += moof(1 + start % id, start), ++start;
  return file;
}

/// 40,000 empty boxes inside a moov beside an mvex: the case found first.
std::string many_boxes(std::size_t size) {
  std::string inner = box("mvex", "");
  while (inner.size() < size - 64) inner += box("free", "");
  return ftyp() + box("moov", inner);
}

double milliseconds(const std::function<void()>& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 16;
  const std::size_t size = mib * 1024 * 1024;
  struct Case {
    const char* name;
    std::string bytes;
  };
  const std::vector<Case> cases = {{"many moov boxes with mvex", many_movies(size)},
                                   {"many tracks, many fragments", many_tracks(size)},
                                   {"many empty boxes in moov", many_boxes(size)}};
  bool linear = true;
  std::printf("%-30s %8s %10s %10s %7s\n", "file", "MiB", "probe ms", "sha256 ms", "ratio");
  for (const Case& c : cases) {
    double seconds = -1;
    const double probe = milliseconds([&] {
      auto clip = clef::MediaClip::from_bytes(c.bytes, clef::MediaKind::audio, c.bytes.size());
      if (clip && clip->seconds()) seconds = *clip->seconds();
    });
    const double reference = milliseconds([&] { (void)clef::sha256_hex(c.bytes); });
    const double ratio = probe / reference;
    std::printf("%-30s %8.1f %10.1f %10.1f %7.2f   (length read: %.0f s)\n", c.name,
                static_cast<double>(c.bytes.size()) / (1024.0 * 1024.0), probe, reference, ratio,
                seconds);
    if (ratio > 20) linear = false;
  }
  return linear ? 0 : 1;
}
