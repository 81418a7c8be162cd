// clef::transport_version (clef/version.hpp): which libcurl and TLS library this process runs on.
#include <curl/curl.h>

#include <string>

#include "clef/version.hpp"

namespace clef {

std::string transport_version() {
  // The library loaded at run time, not the headers clef was built with: a security update of
  // libcurl or OpenSSL shows here without rebuilding clef.
  const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
  if (!info || !info->version) return "libcurl (unknown version)";
  std::string text = std::string("libcurl ") + info->version;
  text += info->ssl_version ? std::string(", TLS: ") + info->ssl_version : ", TLS: none";
  return text;
}

}  // namespace clef
