// Recursion budgets that depend on how large stack frames are. The depth caps of the matcher,
// the GBNF reader and the like are sized for an 8 MiB stack with optimized frames;
// AddressSanitizer builds add redzones to every frame (several times the size), so there the
// caps are divided by stack_depth_divisor — the same guarantee (a typed limit error, never a
// stack overflow) under the sanitizers that check it.
#pragma once

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define CHATPEG_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHATPEG_ADDRESS_SANITIZER 1
#endif
#endif

namespace chatpeg::base {

#ifdef CHATPEG_ADDRESS_SANITIZER
inline constexpr std::size_t stack_depth_divisor = 4;
#else
inline constexpr std::size_t stack_depth_divisor = 1;
#endif

}  // namespace chatpeg::base
