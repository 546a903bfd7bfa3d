# Sanitizer and fuzzing instrumentation, applied to every target of the build (off by default).
#   -DCHATPEG_SANITIZE=address,undefined   the test suite under ASan + UBSan (+ LeakSanitizer,
#                                          part of ASan on Linux): `make test-sanitize`
#   -DCHATPEG_BUILD_FUZZ=ON                libFuzzer targets under fuzz/ (clang only): libraries
#                                          get coverage instrumentation (fuzzer-no-link) plus
#                                          ASan + UBSan; `make fuzz`
# UBSan findings abort (-fno-sanitize-recover) so a test or fuzz run cannot pass over them.
set(CHATPEG_SANITIZE "" CACHE STRING "Comma-separated -fsanitize= list for every target")

set(chatpeg_sanitize_list "${CHATPEG_SANITIZE}")
if(CHATPEG_BUILD_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "CHATPEG_BUILD_FUZZ needs clang (CXX=clang++), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  if(chatpeg_sanitize_list STREQUAL "")
    set(chatpeg_sanitize_list "address,undefined")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(NOT chatpeg_sanitize_list STREQUAL "")
  add_compile_options(-fsanitize=${chatpeg_sanitize_list} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=${chatpeg_sanitize_list} -fno-sanitize-recover=all)
  # Tests that scale with load (sizes, counts) may read this to stay within sanitizer budgets.
  add_compile_definitions(CHATPEG_SANITIZED=1)
endif()
