// Images: recognised by their bytes, size-capped, and encoded the way each backend expects.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "clef/image.hpp"

namespace {

const std::string png("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
const std::string webp = std::string("RIFF\x10\0\0\0WEBPVP8 ", 16);

TEST(Image, SniffsMagicBytesNotNames) {
  EXPECT_EQ(clef::sniff_image_format(png).value(), clef::ImageFormat::png);
  EXPECT_EQ(clef::sniff_image_format("\xFF\xD8\xFF\xDB").value(), clef::ImageFormat::jpeg);
  EXPECT_EQ(clef::sniff_image_format(webp).value(), clef::ImageFormat::webp);
  auto gif = clef::sniff_image_format("GIF89a....");
  ASSERT_FALSE(gif.ok());
  EXPECT_EQ(gif.error().message, "not a PNG, JPEG or WebP image: it is a GIF image");
  // Never the bytes themselves: a dataset may name any file, and the error lands in the output.
  auto secret = clef::sniff_image_format("sk-live-0123456789abcdef");
  ASSERT_FALSE(secret.ok());
  EXPECT_EQ(secret.error().message, "not a PNG, JPEG or WebP image: it is text");
  EXPECT_EQ(clef::sniff_image_format(std::string("\x01\x02sk-live", 9)).error().message,
            "not a PNG, JPEG or WebP image: its first bytes match none of their signatures");
  EXPECT_FALSE(clef::sniff_image_format("RIFF\0\0\0\0WAVE").ok());
  EXPECT_FALSE(clef::sniff_image_format("").ok());
}

TEST(Image, Base64AndDataUrl) {
  auto image = clef::Image::from_bytes(png).value();
  EXPECT_EQ(image.base64(), "iVBORw0KGgoAAAANSUhEUg==");
  EXPECT_EQ(image.data_url(), "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==");
}

TEST(Image, SizeLimitAndFileErrorsNameThePath) {
  auto big = clef::Image::from_bytes(png + std::string(100, 'x'), 64);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error().message.find("over the"), std::string::npos);

  const std::string path = ::testing::TempDir() + "clef_image_test.jpg";
  {
    std::ofstream out(path, std::ios::binary);
    out << png;  // a PNG named .jpg: recognised as PNG
  }
  EXPECT_EQ(clef::Image::from_file(path).value().format(), clef::ImageFormat::png);
  auto small_limit = clef::Image::from_file(path, 8);
  ASSERT_FALSE(small_limit.ok());
  EXPECT_EQ(small_limit.error().where, path);
  {
    std::ofstream out(path, std::ios::binary);
    out << "not an image";
  }
  EXPECT_EQ(clef::Image::from_file(path).error().where, path);
  EXPECT_EQ(clef::Image::from_file("/nonexistent/x.png").error().where, "/nonexistent/x.png");
  std::remove(path.c_str());
}

}  // namespace
