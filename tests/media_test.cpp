// Audio, video and image files recognised by their bytes: real encoders' output (tests/data/media,
// made by make.sh there with ffmpeg) read for container, media type, length and soundtrack, and
// cut, lying or foreign files refused or left without a length, never misread.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "clef/image.hpp"
#include "clef/media.hpp"

namespace {

std::string fixture(const std::string& name) {
  return std::string(CLEF_TEST_DATA) + "/media/" + name;
}

std::string bytes_of(const std::string& name) {
  std::ifstream in(fixture(name), std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct Expected {
  const char* file;
  clef::MediaKind kind;
  const char* media_type;
  double seconds;  // what ffprobe reads from the same file
};

TEST(Media, RealFilesGiveTheirTypeAndLength) {
  using clef::MediaKind;
  const Expected cases[] = {
      {"tone-2s.wav", MediaKind::audio, "audio/wav", 2.0},
      {"tone-2s.mp3", MediaKind::audio, "audio/mpeg", 2.16},
      {"tone-2s.flac", MediaKind::audio, "audio/flac", 2.0},
      {"tone-2s.ogg", MediaKind::audio, "audio/ogg", 2.0},
      {"tone-2s.opus", MediaKind::audio, "audio/ogg", 2.0},
      {"tone-2s.m4a", MediaKind::audio, "audio/mp4", 2.0},
      {"tone-2s.aac", MediaKind::audio, "audio/aac", 2.176},
      {"tone-2s.webm", MediaKind::audio, "audio/webm", 2.008},
      {"clip-1s.mp4", MediaKind::video, "video/mp4", 1.0},
      {"clip-1s-silent.mp4", MediaKind::video, "video/mp4", 1.0},
      {"clip-1s.webm", MediaKind::video, "video/webm", 1.008},
      {"clip-1s.mov", MediaKind::video, "video/quicktime", 1.0},
      {"clip-1s.mkv", MediaKind::video, "video/x-matroska", 1.0},
  };
  for (const auto& expected : cases) {
    SCOPED_TRACE(expected.file);
    auto clip = clef::MediaClip::from_file(fixture(expected.file), expected.kind);
    ASSERT_TRUE(clip.ok()) << clip.error().to_string();
    EXPECT_EQ(clip->media_type(), expected.media_type);
    ASSERT_TRUE(clip->seconds().has_value());
    EXPECT_NEAR(*clip->seconds(), expected.seconds, 0.02);
    EXPECT_EQ(clip->bytes(), bytes_of(expected.file));
    EXPECT_EQ(clip->data_url().rfind(std::string("data:") + expected.media_type + ";base64,", 0),
              0u);
  }
}

TEST(Media, AVideoSaysWhetherItHasASoundtrack) {
  using clef::MediaKind;
  auto with_sound = clef::MediaClip::from_file(fixture("clip-1s.mp4"), MediaKind::video).value();
  auto silent = clef::MediaClip::from_file(fixture("clip-1s-silent.mp4"), MediaKind::video).value();
  auto webm = clef::MediaClip::from_file(fixture("clip-1s.webm"), MediaKind::video).value();
  auto mkv = clef::MediaClip::from_file(fixture("clip-1s.mkv"), MediaKind::video).value();
  EXPECT_EQ(with_sound.has_soundtrack(), true);
  EXPECT_EQ(silent.has_soundtrack(), false);
  EXPECT_EQ(webm.has_soundtrack(), true);
  EXPECT_EQ(mkv.has_soundtrack(), false);
  // Audio has no soundtrack question.
  EXPECT_FALSE(clef::MediaClip::from_file(fixture("tone-2s.m4a"), MediaKind::audio)
                   .value()
                   .has_soundtrack()
                   .has_value());

  EXPECT_FALSE(clef::unheard_soundtracks({with_sound, webm}).has_value());
  EXPECT_FALSE(clef::unheard_soundtracks({silent, mkv}).has_value());
  const auto note = clef::unheard_soundtracks({with_sound, silent});
  ASSERT_TRUE(note.has_value());
  EXPECT_NE(note->find("videos[1] has no soundtrack"), std::string::npos) << *note;
}

TEST(Media, TheWrongKindOrAForeignFileIsRefusedSayingWhatItIs) {
  using clef::MediaKind;
  auto wav_as_video = clef::MediaClip::from_file(fixture("tone-2s.wav"), MediaKind::video);
  ASSERT_FALSE(wav_as_video.ok());
  EXPECT_EQ(wav_as_video.error().message, "this is WAV audio, not a video");
  EXPECT_EQ(wav_as_video.error().where, fixture("tone-2s.wav"));
  auto mov_as_audio = clef::MediaClip::from_file(fixture("clip-1s.mov"), MediaKind::audio);
  ASSERT_FALSE(mov_as_audio.ok());
  EXPECT_EQ(mov_as_audio.error().message, "this is a QuickTime video, not audio");
  auto png = clef::MediaClip::from_file(fixture("pattern-64x48.png"), MediaKind::audio);
  ASSERT_FALSE(png.ok());
  EXPECT_NE(png.error().message.find(": it is a PNG image"), std::string::npos)
      << png.error().message;
  EXPECT_FALSE(clef::MediaClip::from_bytes("", MediaKind::audio).ok());
  EXPECT_FALSE(clef::MediaClip::from_bytes("RIFF\0\0\0\0WEBP", MediaKind::audio).ok());
  auto missing = clef::MediaClip::from_file(fixture("no-such.wav"), MediaKind::audio);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "cannot open audio clip file: No such file or directory");
  // Over the reading cap: refused before the file is read.
  auto capped = clef::MediaClip::from_file(fixture("tone-2s.flac"), MediaKind::audio, 1000);
  ASSERT_FALSE(capped.ok());
  EXPECT_NE(
      capped.error().message.find("audio clip is 15924 bytes, over the 1000-byte (0.0 MiB) limit"),
      std::string::npos)
      << capped.error().message;
}

TEST(Media, ACutFileIsStillRecognisedButItsLengthIsNotGuessed) {
  using clef::MediaKind;
  // An MP4 whose moov (with the length) comes after the media, cut before it; a WebM cut inside
  // its header; an Ogg whose last page is gone is read up to the page that is there.
  const std::string mp4 = bytes_of("clip-1s.mp4");
  const auto moov = mp4.find("moov");
  ASSERT_NE(moov, std::string::npos);
  if (moov > mp4.find("mdat")) {
    auto cut = clef::MediaClip::from_bytes(mp4.substr(0, moov - 4), MediaKind::video);
    ASSERT_TRUE(cut.ok());
    EXPECT_FALSE(cut->seconds().has_value());
    EXPECT_FALSE(cut->has_soundtrack().has_value());
  }
  for (std::size_t keep : {5u, 40u, 200u}) {
    auto webm =
        clef::MediaClip::from_bytes(bytes_of("clip-1s.webm").substr(0, keep), MediaKind::video);
    if (webm.ok()) {
      EXPECT_FALSE(webm->seconds().has_value()) << keep;
    }
  }
  const std::string wav = bytes_of("tone-2s.wav");
  auto half = clef::MediaClip::from_bytes(wav.substr(0, 44 + 8000), MediaKind::audio);
  ASSERT_TRUE(half.ok());
  EXPECT_NEAR(*half->seconds(), 1.0, 0.01);  // what is there counts, not what the header says
}

TEST(Media, ALengthTheContainerStatesIsTheOneRead) {
  // A 52-byte MP4: ftyp, then moov with only mvhd (timescale 1000, duration 61000).
  std::string mp4(
      "\0\0\0\x10"
      "ftypisom\0\0\0\0"
      "\0\0\0\x24moov"
      "\0\0\0\x1cmvhd",
      32);
  mp4 += std::string(12, '\0');
  mp4 += std::string("\0\0\x03\xe8\0\0\xee\x48", 8);
  auto clip = clef::MediaClip::from_bytes(mp4, clef::MediaKind::video);
  ASSERT_TRUE(clip.ok()) << clip.error().to_string();
  EXPECT_DOUBLE_EQ(*clip->seconds(), 61.0);
  EXPECT_FALSE(clip->has_soundtrack().has_value()) << "no track: nothing said of sound";
}

// What an outside hostile probe found: bytes that only look like an MP3 frame, image files in
// an ISO container, a VBR MP3 without a Xing header, a fragmented MP4, AAC behind an ID3 tag, a
// container holding only the other kind of track, and files that are not regular files.
TEST(Media, LookalikesAreRefusedAndAwkwardFilesAreReadWhole) {
  using clef::MediaKind;
  // A JPEG (its comment marker), UTF-16 text and random bytes all hold "FF Fx" somewhere.
  for (const std::string& bytes : {bytes_of("pattern-64x48.jpg"),
                                   std::string("\xFF\xFE"
                                               "h\0i\0",
                                               6),
                                   std::string("\xFF\xFB\x90\x00", 4) + std::string(2000, 'x')}) {
    auto clip = clef::MediaClip::from_bytes(bytes, MediaKind::audio);
    EXPECT_FALSE(clip.ok()) << clip->media_type();
  }
  // AVIF and HEIC are ISO files whose brand says image.
  std::string avif(
      "\0\0\0\x18"
      "ftypavif\0\0\0\0"
      "mif1avif",
      24);
  EXPECT_FALSE(clef::MediaClip::from_bytes(avif, MediaKind::video).ok());

  auto vbr = clef::MediaClip::from_file(fixture("noise-then-silence-3s-vbr.mp3"), MediaKind::audio);
  ASSERT_TRUE(vbr.ok()) << vbr.error().to_string();
  // Every frame counted (ffprobe -count_packets: 44 frames of 576 samples at 8 kHz), not the
  // first frame's bit rate times the size.
  EXPECT_NEAR(*vbr->seconds(), 44 * 576 / 8000.0, 1e-9);

  auto fragmented = clef::MediaClip::from_file(fixture("clip-3s-fragmented.mp4"), MediaKind::video);
  ASSERT_TRUE(fragmented.ok()) << fragmented.error().to_string();
  ASSERT_TRUE(fragmented->seconds().has_value());
  EXPECT_NEAR(*fragmented->seconds(), 3.0, 0.01);  // the fragments' end, not mvhd's 0

  auto tagged = clef::MediaClip::from_file(fixture("tone-2s-id3.aac"), MediaKind::audio);
  ASSERT_TRUE(tagged.ok()) << tagged.error().to_string();
  EXPECT_EQ(tagged->media_type(), "audio/aac");
  EXPECT_NEAR(*tagged->seconds(), 2.176, 0.01);

  auto silent_as_audio =
      clef::MediaClip::from_file(fixture("clip-1s-silent.webm"), MediaKind::audio);
  ASSERT_FALSE(silent_as_audio.ok());
  EXPECT_EQ(silent_as_audio.error().message, "this WebM has no sound track: not audio");
  auto audio_as_video = clef::MediaClip::from_file(fixture("tone-2s.m4a"), MediaKind::video);
  ASSERT_FALSE(audio_as_video.ok());
  EXPECT_EQ(audio_as_video.error().message, "this MP4 has no video track: attach it as audio");

  auto directory = clef::MediaClip::from_file(std::string(CLEF_TEST_DATA), MediaKind::audio);
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().message,
            "audio clip is not a regular file (a directory, pipe or device): give a file");
  EXPECT_FALSE(clef::Image::from_file(std::string(CLEF_TEST_DATA)).ok());
}

TEST(ImageSize, ReadFromEachFormatsHeader) {
  for (const char* name : {"pattern-64x48.png", "pattern-64x48.jpg", "pattern-64x48.webp",
                           "pattern-64x48-lossless.webp"}) {
    SCOPED_TRACE(name);
    auto image = clef::Image::from_file(fixture(name));
    ASSERT_TRUE(image.ok()) << image.error().to_string();
    ASSERT_TRUE(image->size().has_value());
    EXPECT_EQ(image->size()->width, 64u);
    EXPECT_EQ(image->size()->height, 48u);
  }
  // A header cut short: the image is still an image, of unknown size.
  auto cut = clef::Image::from_bytes(bytes_of("pattern-64x48.png").substr(0, 18));
  ASSERT_TRUE(cut.ok());
  EXPECT_FALSE(cut->size().has_value());
}

}  // namespace
