// CLEF_API marks what libclef.so exports. The library is built with hidden visibility, so
// whatever a public header does not mark stays inside it: the ABI is this list, no more.
#pragma once

#if defined(_WIN32)
#if defined(CLEF_BUILDING_SHARED)
#define CLEF_API __declspec(dllexport)
#elif defined(CLEF_USING_SHARED)
#define CLEF_API __declspec(dllimport)
#else
#define CLEF_API
#endif
#else
#define CLEF_API __attribute__((visibility("default")))
#endif
