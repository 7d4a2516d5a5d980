/// @file
/// @brief Build switches of nvtxpp.
///
/// - `NVTXPP_DISABLE` or `NVTX_DISABLE`: compile every annotation out. Classes keep their API but
///   do nothing; macros type-check their arguments without evaluating them.
/// - `NVTXPP_MESSAGE_BUFFER_SIZE`: bytes of the stack buffer a formatted message is built in
///   (default 256, terminating NUL included). Longer texts are truncated and end in "...".
/// - `NVTXPP_NO_SHORT_MACROS`: do not define `ANNOTATE_FUNCTION` and the other short aliases.
/// - `NVTXPP_NO_AUTO_COLOR`: ranges without a colour get none, instead of one derived from their
///   name (it can also be switched at run time with nvtxpp::set_auto_color()).
/// - `NVTXPP_FUNCTION_NAMES`: how NVTXPP_FUNCTION / ANNOTATE_FUNCTION name their range: `bare`
///   (`__func__`: `run`), `qualified` (the default: `ns::solver::run`, `ns::free_fn::<lambda>`)
///   or `signature` (`ns::solver::step(double) const`, `ns::f(T) [T = int]`). Choose it for the
///   whole build (the CMake cache option of the same name sets it on the nvtxpp target):
///   inline functions annotated in headers must name their range alike in every file.
#pragma once

#include <nvtxpp/version.hpp>

#if defined(NVTXPP_DISABLE) || defined(NVTX_DISABLE)
#define NVTXPP_ENABLED 0
#else
#define NVTXPP_ENABLED 1
#endif

#ifndef NVTXPP_MESSAGE_BUFFER_SIZE
#define NVTXPP_MESSAGE_BUFFER_SIZE 256
#endif

#if NVTXPP_MESSAGE_BUFFER_SIZE < 16
#error "NVTXPP_MESSAGE_BUFFER_SIZE must be at least 16"
#endif

#ifndef NVTXPP_FUNCTION_NAMES
#define NVTXPP_FUNCTION_NAMES qualified
#endif
// The style as a number (nvtxpp::function_name_style's value), 0 for an unknown word.
#define NVTXPP_DETAIL_FUNCTION_NAMES_bare 1
#define NVTXPP_DETAIL_FUNCTION_NAMES_qualified 2
#define NVTXPP_DETAIL_FUNCTION_NAMES_signature 3
#define NVTXPP_DETAIL_FUNCTION_NAMES_OF(style) NVTXPP_DETAIL_FUNCTION_NAMES_OF_(style)
#define NVTXPP_DETAIL_FUNCTION_NAMES_OF_(style) NVTXPP_DETAIL_FUNCTION_NAMES_##style
#define NVTXPP_DETAIL_FUNCTION_NAMES NVTXPP_DETAIL_FUNCTION_NAMES_OF(NVTXPP_FUNCTION_NAMES)
#if !(NVTXPP_DETAIL_FUNCTION_NAMES + 0)
#error "NVTXPP_FUNCTION_NAMES must be bare, qualified or signature"
#endif

// A translation unit built with annotations compiled out gets its own inline namespace, so mixing
// such units with normal ones in one program never violates the one-definition rule.
#if NVTXPP_ENABLED
#define NVTXPP_ABI_NAMESPACE v0
#else
#define NVTXPP_ABI_NAMESPACE v0_disabled
#endif

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define NVTXPP_HAS_EXCEPTIONS 1
#else
#define NVTXPP_HAS_EXCEPTIONS 0
#endif
