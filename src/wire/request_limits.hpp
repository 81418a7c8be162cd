// Internal: the limits a backend and model put on a request's attachments and body, checked
// before anything is sent, each refusal naming the limit.
#pragma once

#include <cstddef>
#include <string>

#include "clef/backend.hpp"
#include "clef/request.hpp"

namespace clef::detail {

/// True for a model that takes audio and video ("clef-omni", "@cf/cloudflare/clef-omni",
/// "clef-omni:latest").
bool takes_audio_and_video(const std::string& model);

/// Images, audio and videos against what `backend` and `model` take: counts, sizes, lengths,
/// pixels and totals.
Status check_attachments(const DecisionRequest& request, Backend backend, const std::string& model);

/// Workers AI's limits on images: 4 at most, 4 MiB and 16 megapixels each, 8 MiB in all.
Status check_workers_images(const DecisionRequest& request);
/// Ollama's cap on a request body: 32 MiB.
Status check_ollama_body_size(std::size_t body_bytes);
/// Workers AI's cap on a request body: 13 MiB, but for clef-omni, whose clips alone may be more.
Status check_workers_body_size(std::size_t body_bytes, const std::string& model);

}  // namespace clef::detail
