/* CHATPEG_API marks what the chatpeg library exports. The library is built with hidden
   visibility and a version script, so a shared libchatpeg exports exactly the symbols marked
   here: the C functions chatpeg_* and the C++ classes of namespace chatpeg::api. C and C++. */
#ifndef CHATPEG_API_EXPORT_H
#define CHATPEG_API_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define CHATPEG_API __attribute__((visibility("default")))
#else
#define CHATPEG_API
#endif

#endif /* CHATPEG_API_EXPORT_H */
