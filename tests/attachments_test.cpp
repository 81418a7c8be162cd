// Images, audio and video on the wire: clef-omni's request byte for byte, every limit of the
// published schemas (clef-flash's images, clef-omni's clips) refused before anything is sent with
// a message naming the limit, and the mock checking what Workers AI's schema checks.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "clef/clef.hpp"
#include "clef/mock.hpp"

namespace {

using clef::MediaClip;
using clef::MediaKind;

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(CLEF_TEST_DATA) + "/media/" + name, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string le32(std::uint32_t v) {
  return {static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
          static_cast<char>(v >> 24)};
}

/// A PCM WAV: 8-bit mono at `byte_rate` bytes a second, `data` bytes of silence.
std::string wav(std::uint32_t byte_rate, std::size_t data) {
  std::string out = "RIFF" + le32(static_cast<std::uint32_t>(36 + data)) + "WAVEfmt " + le32(16);
  out += std::string("\x01\x00\x01\x00", 4) + le32(byte_rate) + le32(byte_rate);
  out += std::string("\x01\x00\x08\x00", 4) + "data" + le32(static_cast<std::uint32_t>(data));
  return out + std::string(data, '\x80');
}

/// An MP4 of `bytes` bytes (padded with a free box) whose mvhd states `seconds`.
std::string mp4(std::uint32_t seconds, std::size_t bytes = 52) {
  std::string out(
      "\0\0\0\x10"
      "ftypisom\0\0\0\0"
      "\0\0\0\x24moov"
      "\0\0\0\x1cmvhd",
      32);
  out += std::string(12, '\0');
  const std::uint32_t ms = seconds * 1000;
  out += std::string("\0\0\x03\xe8", 4);
  out += {static_cast<char>(ms >> 24), static_cast<char>(ms >> 16), static_cast<char>(ms >> 8),
          static_cast<char>(ms)};
  if (bytes > out.size()) {
    const std::size_t pad = bytes - out.size();
    out += {static_cast<char>(pad >> 24), static_cast<char>(pad >> 16), static_cast<char>(pad >> 8),
            static_cast<char>(pad)};
    out += "free" + std::string(pad - 8, '\0');
  }
  return out;
}

MediaClip clip(std::string bytes, MediaKind kind) {
  return MediaClip::from_bytes(std::move(bytes), kind, 64u << 20).value();
}

clef::DecisionRequest omni_request() {
  clef::DecisionRequest request;
  request.state = clef::State::text("Caller: my card was charged twice.");
  request.questions = {clef::Question::yes_no("refund", "Asks for a refund?")};
  return request;
}

clef::ClientOptions workers(const clef::MockServer& server, const std::string& model) {
  clef::ClientOptions options;
  options.backend = clef::Backend::workers_ai;
  options.base_url = server.base_url() + "/client/v4";
  options.account_id = "acc9";
  options.api_token = "test-token";
  options.model = model;
  options.retry.max_attempts = 1;
  return options;
}

TEST(Attachments, ClefOmnisRequestIsTheWrittenExample) {
  clef::MockServer server(clef::MockProfile::workers_ai);
  auto request = omni_request();
  request.audio.push_back(clip(wav(8000, 4), MediaKind::audio));
  request.videos.push_back(clip(mp4(1, 52), MediaKind::video));
  auto client = clef::Client::create(workers(server, "@cf/cloudflare/clef-omni")).value();
  EXPECT_EQ(client.endpoint(request),
            server.base_url() + "/client/v4/accounts/acc9/ai/run/@cf/cloudflare/clef-omni");
  EXPECT_EQ(
      client.request_body(request).value(),
      R"({"model":"clef-omni","state":"Caller: my card was charged twice.",)"
      R"("questions":{"refund":{"type":"noul","instructions":"Asks for a refund?"}},)"
      R"("audio":["data:audio/wav;base64,UklGRigAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQQAAACAgICA"],)"
      R"("videos":["data:video/mp4;base64,AAAAEGZ0eXBpc29tAAAAAAAAACRtb292AAAAHG12aGQAAAAAAAAAAAAAAAAAAAPoAAAD6A=="]})");
}

TEST(Attachments, ClefOmniAnswersThroughTheMockThatChecksItsSchema) {
  clef::MockServer server(clef::MockProfile::workers_ai);
  server.set_models({"clef-flash", "clef-omni"});
  auto request = omni_request();
  request.audio.push_back(MediaClip::from_bytes(fixture("tone-2s.mp3"), MediaKind::audio).value());
  request.videos.push_back(
      MediaClip::from_bytes(fixture("clip-1s.webm"), MediaKind::video).value());
  request.images.push_back(clef::Image::from_bytes(fixture("pattern-64x48.png")).value());
  auto decision =
      clef::Client::create(workers(server, "@cf/cloudflare/clef-omni")).value().decide(request);
  ASSERT_TRUE(decision.ok()) << decision.error().to_string();
  EXPECT_EQ(decision->answers.size(), 1u);
  const auto body = nlohmann::json::parse(server.requests().at(0).body);
  EXPECT_EQ(body["audio"][0].get<std::string>().rfind("data:audio/mpeg;base64,", 0), 0u);
  EXPECT_EQ(body["videos"][0].get<std::string>().rfind("data:video/webm;base64,", 0), 0u);
}

TEST(Attachments, TheMockHoldsClefOmnisSchemaExactly) {
  clef::MockServer server(clef::MockProfile::workers_ai);
  server.set_models({"clef-flash", "clef-omni"});
  auto client = clef::Client::create(workers(server, "@cf/cloudflare/clef-omni")).value();
  // Raw bodies clef itself would never send, straight to the mock.
  auto send = [&](const std::string& extra) {
    const auto request = omni_request();
    const std::string body = R"({"model":"clef-omni","state":"x","questions":{"q":{"type":"noul",)"
                             R"("instructions":"?"}})" +
                             extra + "}";
    clef::HttpRequest raw;
    raw.method = "POST";
    raw.url = client.endpoint(request);
    raw.body = body;
    raw.headers = {{"Authorization", "Bearer test-token"}, {"Content-Type", "application/json"}};
    return clef::make_curl_transport()->send(raw);
  };
  // The schema's audio pattern is "^data:audio/" exactly: upper case is refused.
  auto upper = send(R"(,"audio":["data:AUDIO/wav;base64,AAAA"])");
  ASSERT_TRUE(upper.ok());
  EXPECT_EQ(upper->status, 400);
  EXPECT_NE(upper->body.find(R"(audio[0]: must match \"^data:audio/\")"), std::string::npos)
      << upper->body;
  // Images take any case, and the {content_type, base64} form.
  auto images = send(R"(,"images":["DATA:image/png;base64,AAAA",{"content_type":"image/png",)"
                     R"("base64":"AAAA"}])");
  ASSERT_TRUE(images.ok());
  EXPECT_EQ(images->status, 200) << images->body;
  auto three_videos = send(R"(,"videos":["data:video/mp4;base64,","data:video/mp4;base64,",)"
                           R"("data:video/mp4;base64,"])");
  ASSERT_TRUE(three_videos.ok());
  EXPECT_EQ(three_videos->status, 400);
  EXPECT_NE(three_videos->body.find("videos: at most 2 items"), std::string::npos);
}

/// Sends `request` to a Workers AI mock and expects it refused before anything reached the server.
clef::Error refused(const clef::DecisionRequest& request, const std::string& model,
                    clef::Backend backend = clef::Backend::workers_ai) {
  clef::MockServer server(backend == clef::Backend::ollama ? clef::MockProfile::ollama
                                                           : clef::MockProfile::workers_ai);
  server.set_models({"clef-flash", "clef-omni"});
  clef::ClientOptions options = workers(server, model);
  if (backend == clef::Backend::ollama) {
    options = clef::ClientOptions{};
    options.base_url = server.base_url();
    options.model = model;
  }
  auto decision = clef::Client::create(options).value().decide(request);
  EXPECT_FALSE(decision.ok());
  EXPECT_TRUE(server.requests().empty()) << "sent although over a limit";
  if (decision.ok()) return {};
  EXPECT_EQ(decision.error().kind, clef::ErrorKind::invalid_input);
  return decision.error();
}

TEST(Attachments, EveryClipLimitIsRefusedBeforeSendingNamingIt) {
  const std::string omni = "@cf/cloudflare/clef-omni";
  auto five_audio = omni_request();
  five_audio.audio.assign(5, clip(wav(8000, 4), MediaKind::audio));
  auto error = refused(five_audio, omni);
  EXPECT_EQ(error.message, "clef-omni takes at most 4 audio clips, got 5");
  EXPECT_EQ(error.where, "audio");

  auto three_videos = omni_request();
  three_videos.videos.assign(3, clip(mp4(1), MediaKind::video));
  EXPECT_EQ(refused(three_videos, omni).message, "clef-omni takes at most 2 videos, got 3");

  auto big_audio = omni_request();
  big_audio.audio.push_back(clip(wav(8000000, (8u << 20) - 44 + 1), MediaKind::audio));
  error = refused(big_audio, omni);
  EXPECT_EQ(error.message,
            "audio clip is 8388609 bytes (8.0 MiB), over clef-omni's 8388608 bytes (8.0 MiB) per "
            "audio clip");
  EXPECT_EQ(error.where, "audio[0]");

  auto long_audio = omni_request();
  long_audio.audio.push_back(clip(wav(8000, 8000 * 300 + 1), MediaKind::audio));
  error = refused(long_audio, omni);
  EXPECT_EQ(error.message,
            "audio clip is 300.000125 s long, over clef-omni's 300 s per audio clip");

  auto big_video = omni_request();
  big_video.videos.push_back(clip(mp4(1), MediaKind::video));
  big_video.videos.push_back(clip(mp4(1, (16u << 20) + 1), MediaKind::video));
  error = refused(big_video, omni);
  EXPECT_EQ(error.message,
            "video clip is 16777217 bytes (16.0 MiB), over clef-omni's 16777216 bytes (16.0 MiB) "
            "per video clip");
  EXPECT_EQ(error.where, "videos[1]");

  auto long_video = omni_request();
  long_video.videos.push_back(clip(mp4(61), MediaKind::video));
  EXPECT_EQ(refused(long_video, omni).message,
            "video clip is 61 s long, over clef-omni's 60 s per video clip");

  auto too_much = omni_request();
  too_much.audio.push_back(clip(wav(8000000, 7u << 20), MediaKind::audio));
  too_much.videos.push_back(clip(mp4(1, 10u << 20), MediaKind::video));
  EXPECT_EQ(refused(too_much, omni).message,
            "audio and video come to 17825836 bytes (17.0 MiB) decoded, over clef-omni's 16 MiB "
            "(16777216 bytes) for all clips of a request");

  // At each limit exactly, it goes.
  clef::MockServer server(clef::MockProfile::workers_ai);
  auto client = clef::Client::create(workers(server, omni)).value();
  auto edge = omni_request();
  edge.audio.push_back(clip(wav(8000000, (8u << 20) - 44), MediaKind::audio));
  edge.audio.push_back(clip(wav(8000, 8000 * 300), MediaKind::audio));
  edge.videos.push_back(clip(mp4(60), MediaKind::video));
  EXPECT_TRUE(client.request_body(edge).ok()) << client.request_body(edge).error().to_string();
}

TEST(Attachments, AModelOrServerWithoutAudioRefusesIt) {
  auto request = omni_request();
  request.audio.push_back(clip(wav(8000, 4), MediaKind::audio));
  // clef-flash's schema has no audio: Workers AI would drop it without a word.
  EXPECT_EQ(refused(request, "@cf/cloudflare/clef-flash").message,
            "model \"clef-flash\" takes no audio or video: only clef-omni "
            "(@cf/cloudflare/clef-omni) does");
  EXPECT_EQ(refused(request, "clef-omni", clef::Backend::ollama).message,
            "Ollama's System One API takes images only, not audio or video");
}

/// A PNG header stating `width` x `height`, then `bytes` in all.
std::string png(std::uint32_t width, std::uint32_t height, std::size_t bytes = 33) {
  auto be = [](std::uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 8), static_cast<char>(v)};
  };
  std::string out = std::string("\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR", 16) + be(width) + be(height);
  out += std::string("\x08\x02\0\0\0", 5);
  return out + std::string(bytes > out.size() ? bytes - out.size() : 0, '\0');
}

TEST(Attachments, EveryWorkersAiImageLimitIsRefusedBeforeSendingNamingIt) {
  const std::string flash = "@cf/cloudflare/clef-flash";
  auto image = [](std::string bytes) { return clef::Image::from_bytes(std::move(bytes)).value(); };
  auto five = omni_request();
  five.images.assign(5, image(png(64, 48)));
  EXPECT_EQ(refused(five, flash).message, "Workers AI takes at most 4 images, got 5");

  auto big = omni_request();
  big.images.push_back(image(png(64, 48, (4u << 20) + 1)));
  EXPECT_EQ(refused(big, flash).message,
            "image is 4194305 bytes (4.0 MiB), over Workers AI's 4 MiB (4194304 bytes) per image");

  auto wide = omni_request();
  wide.images.push_back(image(png(5000, 4000)));
  auto error = refused(wide, flash);
  EXPECT_EQ(error.message,
            "image is 5000 x 4000 (20.0 megapixels), over Workers AI's 16 megapixels "
            "(4096 x 4096) per image");
  EXPECT_EQ(error.where, "images[0]");

  auto total = omni_request();
  total.images.assign(3, image(png(64, 48, 3u << 20)));
  EXPECT_EQ(refused(total, flash).message,
            "images come to 9437184 bytes (9.0 MiB) decoded, over Workers AI's 8 MiB (8388608 "
            "bytes) for all images of a request");

  auto body = omni_request();
  body.state = clef::State::text(std::string(13u << 20, 'x'));
  EXPECT_EQ(refused(body, flash).message,
            "request is 13631596 bytes (13.0 MiB), over Workers AI's 13 MiB (13631488 bytes) per "
            "request body");

  // At the limits exactly, it goes.
  clef::MockServer server(clef::MockProfile::workers_ai);
  auto edge = omni_request();
  edge.images.push_back(image(png(4096, 4096, 4u << 20)));
  edge.images.push_back(image(png(64, 48, 4u << 20)));
  auto decision = clef::Client::create(workers(server, flash)).value().decide(edge);
  EXPECT_TRUE(decision.ok()) << decision.error().to_string();
}

}  // namespace
