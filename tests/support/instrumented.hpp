// Whether this test binary runs under a sanitizer (ASan, TSan): its CPU and memory figures are
// then the sanitizer's as much as clef's, and a bound on them means nothing.
#pragma once

namespace clef::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool instrumented_build = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool instrumented_build = true;
#else
inline constexpr bool instrumented_build = false;
#endif
#else
inline constexpr bool instrumented_build = false;
#endif

}  // namespace clef::testing
